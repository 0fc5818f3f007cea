// `npm run model:deliveries` (docs/performance.md, Deliveries in production: a model): the consumer's sending policy
// run against a mix of receivers at production's limits, as a simulation, not a test. Each queue batch of 100
// deliveries is sent through 6 connections (Workers' simultaneous open connections); up to 250 batches are consumed
// at once (Queues' concurrent consumer invocations), and no queue carries more than 5,000 messages a second. Two
// policies are compared on the same batches:
// - "at once": every send starts together and its 10 s timeout starts then, while the runtime queues it for a
//   connection (the consumer before it kept the limit itself): a send that waits long behind slow receivers times out
//   although its own receiver would have answered in time, a false timeout;
// - "slots": the consumer's own 6 slots (src/lib/connection-slots.ts), each timeout starting with its connection.
// It prints, for each policy, the deliveries a second the consumer sustains and the share of false timeouts. The
// receivers' mix and the D1 costs per batch are arguments; the defaults are the figures docs/performance.md records.
//
//   node scripts/delivery-model.ts [--batches 2000] [--slow 0.2] [--hanging 0.02] [--failing 0.05] [--seed 1]
import { parseArgs } from "node:util";

const CONNECTIONS = 6;
const BATCH = 100;
const TIMEOUT_MS = 10_000;
const CONCURRENT_INVOCATIONS = 250;
const QUEUE_MESSAGES_PER_SECOND = 5_000;
/** The batch's two D1 round trips (claim, record), measured locally at about 15 ms each with 100 deliveries. */
const D1_MS_PER_BATCH = 30;

const { values } = parseArgs({
  options: {
    batches: { type: "string", default: "2000" },
    slow: { type: "string", default: "0.2" },
    hanging: { type: "string", default: "0.02" },
    failing: { type: "string", default: "0.05" },
    seed: { type: "string", default: "1" },
  },
});

/** A small deterministic generator (mulberry32), so that a run can be repeated. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(Number(values.seed));
const [slow, hanging, failing] = [values.slow, values.hanging, values.failing].map(Number) as [number, number, number];

/** How long a receiver takes to answer: fast (20–150 ms), failing fast, slow (1–5 s), or hanging (never). */
function answerTime(): number {
  const draw = next();
  if (draw < hanging) return Number.POSITIVE_INFINITY;
  if (draw < hanging + slow) return 1_000 + next() * 4_000;
  if (draw < hanging + slow + failing) return 20 + next() * 50;
  return 20 + next() * 130;
}

type Outcome = { durationMs: number; falseTimeouts: number; timeouts: number };

/** One batch through `CONNECTIONS` connections, first come first served; `fromStart`: timeouts count from the batch's start. */
function sendBatch(answers: number[], fromStart: boolean): Outcome {
  const free = Array<number>(CONNECTIONS).fill(0);
  let falseTimeouts = 0;
  let timeouts = 0;
  for (const answer of answers) {
    const slot = free.indexOf(Math.min(...free));
    const start = free[slot] ?? 0;
    const deadline = fromStart ? TIMEOUT_MS : start + TIMEOUT_MS;
    const end = Math.min(start + answer, deadline);
    if (start + answer > deadline) {
      timeouts += 1;
      if (answer <= TIMEOUT_MS) falseTimeouts += 1;
    }
    // A send whose timeout passed while it waited never gets its connection.
    free[slot] = Math.max(start, end);
  }
  return { durationMs: Math.max(...free) + D1_MS_PER_BATCH, falseTimeouts, timeouts };
}

const batches = Array.from({ length: Number(values.batches) }, () => Array.from({ length: BATCH }, answerTime));
for (const [name, fromStart] of [
  ["at once", true],
  ["slots", false],
] as const) {
  const outcomes = batches.map((answers) => sendBatch(answers, fromStart));
  const meanMs = outcomes.reduce((sum, outcome) => sum + outcome.durationMs, 0) / outcomes.length;
  const perSecond = Math.min((CONCURRENT_INVOCATIONS * BATCH * 1_000) / meanMs, QUEUE_MESSAGES_PER_SECOND);
  const sent = outcomes.length * BATCH;
  const share = (count: number) => `${((100 * count) / sent).toFixed(2)} %`;
  const falseTimeouts = outcomes.reduce((sum, outcome) => sum + outcome.falseTimeouts, 0);
  const timeouts = outcomes.reduce((sum, outcome) => sum + outcome.timeouts, 0);
  console.log(
    `${name.padEnd(8)} ${perSecond.toFixed(0).padStart(5)} deliveries/s (a batch takes ${(meanMs / 1000).toFixed(2)} s), timeouts ${share(timeouts)}, of which false ${share(falseTimeouts)}`,
  );
}
