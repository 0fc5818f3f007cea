/**
 * Limits that count in fixed windows of the wall clock: the Rate Limiting binding's minute, or a BusinessLimits
 * budget's clock hour (an endpoint's redeliveries and recovers). A burst that crossed a window's end would start
 * counting afresh and never be refused: when less than `burstMs` remain in the current window of `windowMs`, wait for
 * the next one (at most `burstMs`).
 */
export async function awayFromWindowEdge(burstMs = 5000, windowMs = 60_000) {
  const left = windowMs - (Date.now() % windowMs);
  if (left < burstMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
