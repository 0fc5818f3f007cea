import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakeResponses, intakes } from "../../src/db/schema";
import { approveIntake, formsPostingTo, page, post, signedIn, submit, testIdText } from "../helpers/dashboard";
import { createApiKey, db } from "../helpers/fixtures";
import { createIntake, insertResponses, intakeBody, patchIntake, postIntake } from "../helpers/intakes";
import { createOwnerBusiness } from "../helpers/oauth";

// docs/decisions.md, The owner's dashboard: the owner removes any intake of the business, also one whose key was
// revoked (off, unreachable by any partner, still counted among the 5), after a confirmation naming it and its
// responses; and the approval screen warns of a change only when there is one.

const intakeRow = (id: number) => db.select().from(intakes).where(eq(intakes.id, id)).get();
const responsesOf = (id: number) => db.select().from(intakeResponses).where(eq(intakeResponses.intakeId, id));
const NOT_FROM_DASHBOARD = "This form was not sent from your dashboard";

describe("the change warning on an intake's page", async () => {
  const mine = await createOwnerBusiness();
  const jar = await signedIn(mine);

  it("is not drawn right after an approval, and lists the change after a partner's PATCH", async () => {
    const intake = await createIntake(mine.apiKey, { title: "Kitchen quote" });
    const path = `/dashboard/intakes/${intake.id}`;
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    const approved = await page(jar, path);
    expect(approved.html).not.toContain('data-testid="changes"');
    expect(approved.html).not.toContain("Changed since the version you approved");

    await expect(await patchIntake(mine.apiKey, intake.id, { title: "Bathroom quote" })).toHaveStatus(200);
    const changed = testIdText((await page(jar, path)).html, "changes");
    expect(changed).toContain("Changed since the version you approved (1)");
    expect(changed).toContain("Title: “Kitchen quote” → “Bathroom quote”");
    expect(changed).not.toContain("Nothing.");
  });
});

describe("removing an intake from the dashboard", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);

  it("confirms first, naming the intake and its responses, then deletes both", async () => {
    const intake = await createIntake(mine.apiKey, { title: "Roof repair" });
    await insertResponses(intake, mine.business.id, 3);
    const path = `/dashboard/intakes/${intake.id}/remove`;

    expect((await page(jar, `/dashboard/intakes/${intake.id}`)).html).toContain(`href="${path}"`);
    const confirmation = await page(jar, path);
    await expect(confirmation).toHaveStatus(200);
    const stops = testIdText(confirmation.html, "stops");
    expect(stops).toContain(`The intake “Roof repair” ( ${intake.name} ) is deleted`);
    expect(stops).toContain("Its 3 stored responses are deleted with it.");
    expect(formsPostingTo(confirmation.html, path)).toBe(1);
    // Nothing changes until the owner confirms.
    expect(await intakeRow(intake.id)).toBeDefined();

    const removed = await submit(jar, path, path);
    await expect(removed).toHaveStatus(303);
    expect(removed.headers.get("Location")).toBe("/dashboard/intakes?removed=1");
    expect(await intakeRow(intake.id)).toBeUndefined();
    expect(await responsesOf(intake.id)).toEqual([]);
    const list = await page(jar, "/dashboard/intakes?removed=1");
    expect(testIdText(list.html, "notice")).toBe("The intake was removed, with its stored responses.");
    expect(list.html).not.toContain(`/dashboard/intakes/${intake.id}"`);
  });

  it("removes a revoked key's intake, which frees its place among the business's 5", async () => {
    const revokedKey = await createApiKey(mine.business.id);
    const orphan = await createIntake(revokedKey.apiKey, { title: "Of a revoked key" });
    while ((await postIntake(mine.apiKey, intakeBody())).status === 201);
    const full = await postIntake(mine.apiKey, intakeBody());
    await expect(full).toHaveStatus(403);
    const revoked = await submit(jar, "/dashboard/keys", `/dashboard/keys/${revokedKey.apiKeyId}/revoke`);
    await expect(revoked).toHaveStatus(303);
    expect((await page(jar, `/dashboard/intakes/${orphan.id}`)).html).toContain(
      "The key or app that registered this intake was revoked",
    );

    const path = `/dashboard/intakes/${orphan.id}/remove`;
    const confirmation = await page(jar, path);
    expect(testIdText(confirmation.html, "stops")).toContain("No response is stored.");
    expect(testIdText(confirmation.html, "remains")).toContain("has lost its access");
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await intakeRow(orphan.id)).toBeUndefined();
    await expect(await postIntake(mine.apiKey, intakeBody())).toHaveStatus(201);
  });

  it("shows another business's intake as not found, and removes nothing of theirs", async () => {
    const intake = await createIntake(theirs.apiKey);
    await insertResponses(intake, theirs.business.id, 1);
    const path = `/dashboard/intakes/${intake.id}/remove`;
    const confirmation = await page(jar, path);
    await expect(confirmation).toHaveStatus(404);
    await expect(await submit(jar, "/dashboard", path)).toHaveStatus(404);
    expect(await intakeRow(intake.id)).toBeDefined();
    expect(await responsesOf(intake.id)).toHaveLength(1);
  });

  it("refuses the removal without the session's CSRF token", async () => {
    // Its own business: the one above is at its limit of 5 again.
    const other = await createOwnerBusiness();
    const intake = await createIntake(other.apiKey);
    const refused = await post(await signedIn(other), `/dashboard/intakes/${intake.id}/remove`);
    await expect(refused).toHaveStatus(403);
    expect(await refused.text()).toContain(NOT_FROM_DASHBOARD);
    expect(await intakeRow(intake.id)).toBeDefined();
  });
});
