/**
 * A Worker invocation waits on at most 6 outbound connections at once, and a seventh fetch waits unseen. So lookups
 * and signed POSTs take one of these slots first and start their timeout only once they hold it: none times out for a
 * wait that is not its receiver's (docs/architecture.md, Outbound calls). Kept here, where a test can count it, since
 * `wrangler dev` enforces no such limit.
 */
export const OPEN_CONNECTIONS = 6;

export class ConnectionSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(capacity = OPEN_CONNECTIONS) {
    this.free = capacity;
  }

  /** Runs `work` once a slot is free (first come, first served), and frees it when `work` settles. */
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
