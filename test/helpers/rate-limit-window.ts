/**
 * The Rate Limiting binding counts in fixed windows of the wall clock (a minute here). A burst that crossed a window's
 * end would start counting afresh and never be refused: when less than `burstMs` remain in the current window, wait
 * for the next one (at most `burstMs`).
 */
export async function awayFromWindowEdge(burstMs = 5000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < burstMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
