import { nothingMore } from "../../db/reads";
import { partnerRead } from "./partner-operation";

/* What the partner API's business route runs (src/routes/me.ts, through src/routes/operation-runner.ts). */

/** `GET /me`: the business comes with the credential's own lookup, so nothing more is read: one round trip. */
export const getBusinessOperation = partnerRead(() => nothingMore);
