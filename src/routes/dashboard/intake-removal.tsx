import type { Context } from "hono";
import { Hono } from "hono";
import { intakeRemoval, removeIntake } from "../../domain/intakes/owner-removal";
import { intakeNotFound } from "../../domain/intakes/registration";
import { idOrNotFound } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { Confirmation } from "./confirmation";
import type { DashboardEnv } from "./dashboard-env";
import { Layout } from "./layout";

/** The page's id as the domain takes it, or the 404 page (the intake's pages and its removal). */
export const intakeId = (c: Context<DashboardEnv>) => idOrNotFound(c.req.param("id") ?? "", intakeNotFound);

const responsesText = (count: number) =>
  count === 0
    ? "No response is stored."
    : `Its ${count} stored ${count === 1 ? "response is" : "responses are"} deleted with it.`;

/**
 * The owner removes any intake of the business (docs/decisions.md, The owner's dashboard), also one whose key was
 * revoked or whose app was disconnected: a confirmation naming the intake and its stored responses, then the one form
 * that deletes them together, as the partner's DELETE does.
 */
export const intakeRemovalPages = new Hono<DashboardEnv>()
  .get("/intakes/:id/remove", async (c) => {
    const session = c.var.session;
    const intake = await intakeRemoval(c.var.deps, session.business.id, intakeId(c));
    return renderPage(
      c,
      200,
      <Layout title="Remove this intake?" session={session}>
        <p>
          <strong>{intake.title}</strong> <code>{intake.name}</code>
        </p>
        <Confirmation
          session={session}
          stops={
            <ul>
              <li>
                The intake “{intake.title}” (<code>{intake.name}</code>) is deleted
                {intake.enabled ? ": the Secretary stops asking its questions from now on." : "."}
              </li>
              <li data-testid="responses">{responsesText(intake.responses)}</li>
              <li>This cannot be undone.</li>
            </ul>
          }
          remains={
            <p>
              Every other intake, and its place among the business's 5 intakes is free again.
              {intake.revoked
                ? " The key or app that registered it has lost its access."
                : " The app or integration that registered it can register an intake again."}
            </p>
          }
          action={`/dashboard/intakes/${intake.id}/remove`}
          confirm="Remove the intake"
          back={`/dashboard/intakes/${intake.id}`}
        />
      </Layout>,
    );
  })
  .post("/intakes/:id/remove", async (c) => {
    await removeIntake(c.var.deps, c.var.session.business.id, intakeId(c));
    return c.redirect("/dashboard/intakes?removed=1", 303);
  });
