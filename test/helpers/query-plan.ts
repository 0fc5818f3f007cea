/** SQLite's plan for `sql` with `params` bound: the details of `EXPLAIN QUERY PLAN`, step by step. */
export async function queryPlan(d1: D1Database, sql: string, params: unknown[]): Promise<string[]> {
  const plan = await d1
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return plan.results.map((step) => step.detail);
}
