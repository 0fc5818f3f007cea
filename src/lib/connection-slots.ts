/**
 * A Worker invocation may have at most 6 outbound connections waiting for their answer's headers at once; a seventh
 * waits unseen, and the body of an answer whose headers have arrived no longer counts (Cloudflare's limits, as
 * relaxed in April 2026). So lookups and signed POSTs take one of these slots first, start their timeout only once
 * they hold it, and give it back when the headers arrive: none times out for a wait that is not its receiver's
 * (docs/architecture.md, Outbound calls). Kept here, where a test can count it, since `wrangler dev` enforces no such
 * limit.
 */
export const OPEN_CONNECTIONS = 6;

export class ConnectionSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(capacity = OPEN_CONNECTIONS) {
    this.free = capacity;
  }

  /**
   * Runs `work` (a request, up to its answer's headers) once a slot is free, first come, first served, and frees the
   * slot when `work` settles.
   */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
