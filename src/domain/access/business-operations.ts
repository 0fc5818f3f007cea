import { nothingMore } from "../../db/reads";
import { partnerRead } from "./partner-operation";

/* What the partner API's business route runs (src/routes/me.ts, through src/admission/partner-admission.ts). */

/** `GET /me`: the business comes with the credential's own lookup, so nothing more is read: one round trip. */
export const getBusinessOperation = partnerRead(() => nothingMore);
