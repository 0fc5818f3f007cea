import type { TestProject } from "vitest/node";
import { startReceiver } from "./receiver";

declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
  }
}

/** Starts the real HTTP receiver once for the whole run and hands its address to the Worker as RECEIVER_URL. */
export default async function setup(project: TestProject) {
  const { url, server } = await startReceiver();
  project.provide("receiverUrl", url);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
