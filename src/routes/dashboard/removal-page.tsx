import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { renderPage } from "../../pages/page-shell";
import { Confirmation } from "./confirmation";
import type { DashboardEnv } from "./dashboard-env";
import { Layout } from "./layout";

/**
 * The page before the owner removes what a partner registered, whoever registered it (docs/architecture.md, What
 * happens when access ends): the record `named`, then the confirmation, whose form posts to `{at}/remove` and whose
 * Cancel leads back to the record's page, `at`.
 */
export function removalPage(
  c: Context<DashboardEnv>,
  page: { title: string; named: Child; at: string; confirm: string; stops: Child; remains: Child },
) {
  const { session } = c.var;
  return renderPage(
    c,
    200,
    <Layout title={page.title} session={session}>
      <p>{page.named}</p>
      <Confirmation
        session={session}
        stops={page.stops}
        remains={page.remains}
        action={`${page.at}/remove`}
        confirm={page.confirm}
        back={page.at}
      />
    </Layout>,
  );
}
