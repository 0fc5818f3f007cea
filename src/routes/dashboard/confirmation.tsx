import type { Child } from "hono/jsx";
import type { OwnerSession } from "../../domain/access/owner-sign-in";
import { Csrf } from "./layout";

/**
 * The step before an owner's action that cannot be undone (removing an endpoint or an action, revoking a key,
 * disconnecting an app: docs/architecture.md, What happens when access ends): what will stop, what remains, then the
 * one form that does it, and a way back that changes nothing. A GET page, so following a link never changes anything.
 */
export function Confirmation(props: {
  session: OwnerSession;
  stops: Child;
  remains: Child;
  /** Where the form posts: the existing action. */
  action: string;
  confirm: string;
  /** Where "Cancel" leads. */
  back: string;
  /** A choice the owner makes with the confirmation (its fields post with the form). */
  choice?: Child;
}) {
  return (
    <>
      <section class="warning" data-testid="stops">
        <h2>What stops</h2>
        {props.stops}
      </section>
      <section data-testid="remains">
        <h2>What remains</h2>
        {props.remains}
      </section>
      <form method="post" action={props.action}>
        <Csrf session={props.session} />
        {props.choice}
        <p>
          <button type="submit" class="danger">
            {props.confirm}
          </button>{" "}
          <a href={props.back}>Cancel</a>
        </p>
      </form>
    </>
  );
}

/** A list of names (intakes, endpoints, actions, texts), or `none` said in words when it is empty. */
export function NamedList<T>(props: { items: T[]; none: string; item: (item: T) => Child }) {
  if (props.items.length === 0) return <p>{props.none}</p>;
  return (
    <ul>
      {props.items.map((item) => (
        <li>{props.item(item)}</li>
      ))}
    </ul>
  );
}
