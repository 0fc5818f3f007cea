/** What the test receiver (test/receiver.ts) records of each request that reaches it. */
export type RecordedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
};
