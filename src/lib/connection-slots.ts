/**
 * Cloudflare lets one Worker invocation wait on at most 6 outbound connections at once (Workers limits, "Simultaneous
 * open connections"); a seventh fetch waits unseen for one of them to end. So the service queues its own outbound
 * requests (DNS-over-HTTPS lookups and signed POSTs) through these slots, one set per invocation, and starts a
 * request's timeout only once it holds a slot: a request waiting behind slow receivers is never timed out for a wait
 * that is not its receiver's (docs/architecture.md, Outbound calls). `wrangler dev` enforces no such limit, which is
 * why the service keeps it itself, where a test can count it.
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
