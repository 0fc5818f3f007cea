import type { Read } from "../../db/reads";
import type { Dependencies } from "../../dependencies";
import type { Principal } from "./principals";
import type { CredentialSide } from "./scope";

/**
 * A partner request as the domain states it (docs/architecture.md, One way through a partner request): what it reads
 * in the same D1 batch as the credential's lookup (one round trip), and what it writes once the credential is
 * admitted (one more at most). `src/admission/partner-admission.ts` runs every one the same way: the credential with the
 * read, admission (plan, budget), the idempotency claim, the write; the deliveries the write emits are enqueued after
 * the answer (`Dependencies.enqueue`). Without `write`, the read is the answer.
 */
export type PartnerOperation<Input, Loaded, Output> = {
  /** Scoped by the credential's own side: a refused credential reads nothing. */
  read?: (side: CredentialSide, input: Input) => Read<Loaded>;
  write?: (deps: Dependencies, principal: Principal, input: Input, loaded: Loaded) => Promise<Output>;
};

/** An operation that only reads: its answer is the read's. */
export const partnerRead = <Input, Output>(
  read: (side: CredentialSide, input: Input) => Read<Output>,
): PartnerOperation<Input, Output, Output> => ({ read });

/** An operation that writes, after an optional read in the credential's batch. */
export const partnerWrite = <Input, Loaded, Output>(
  operation: Required<Pick<PartnerOperation<Input, Loaded, Output>, "write">> &
    Pick<PartnerOperation<Input, Loaded, Output>, "read">,
): PartnerOperation<Input, Loaded, Output> => operation;
