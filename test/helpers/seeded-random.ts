/**
 * A seeded xorshift32 generator (Marsaglia, "Xorshift RNGs", 2003): the same seed draws the same numbers, so a
 * randomized test that names its seed reproduces any failure it finds.
 */
export function seededRandom(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  return {
    /** A whole number in [0, n). */
    below: (n: number) => Math.floor(next() * n),
    /** One of `items`, each as likely. */
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error("nothing to pick from");
      return item;
    },
  };
}
