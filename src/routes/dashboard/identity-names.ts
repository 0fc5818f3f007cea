import type { IdentityKind } from "../../domain/intakes/question-detection";

/** What each kind of identity question asks for, in the owner's words (intake and action reviews). */
export const IDENTITY_NAMES: Record<IdentityKind, string> = {
  full_name: "full name",
  home_address: "home address",
  date_of_birth: "date of birth",
};
