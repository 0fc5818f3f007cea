import type { OwnerSession } from "../../domain/access/owner-sign-in";
import type { openSessionsForOwner } from "../../domain/webhooks/owner-sessions";
import { ButtonForm } from "./layout";
import { When } from "./time-text";
import { eventsInWords } from "./webhook-event-words";

type OpenSession = Awaited<ReturnType<typeof openSessionsForOwner>>[number];

/** Who opened a session: the API key by its label and first characters, or the app by its name. */
function OpenedBy(props: { session: OpenSession }) {
  const { creator, keyLabel, keyPrefix } = props.session;
  return (
    <span class="muted">
      {creator.kind === "app" ? (
        `Opened by the app ${creator.appName}`
      ) : (
        <>
          Opened with the API key {keyLabel ?? "that was removed"} <code>{keyPrefix ?? ""}…</code>
        </>
      )}
    </span>
  );
}

/**
 * The listening sessions open on the business (docs/webhooks.md, Listening sessions end): a partner's command line
 * receiving its events on a laptop, who opened each and since when, and an End button, which closes its socket at once.
 */
export function ListeningSessions(props: { sessions: OpenSession[]; session: OwnerSession }) {
  return (
    <section>
      <h2>Listening sessions</h2>
      {props.sessions.length === 0 ? (
        <p>No listening session is open.</p>
      ) : (
        <table>
          {props.sessions.map((open) => (
            <tr data-testid={`session-${open.id}`}>
              <td>
                <OpenedBy session={open} />
                <br />
                <span class="muted">
                  {eventsInWords(open.events)}, since <When at={open.openedAt} />
                </span>
              </td>
              <td>
                <ButtonForm
                  session={props.session}
                  action={`/dashboard/listening-sessions/${open.id}/end`}
                  label="End session"
                  kind="danger"
                />
              </td>
            </tr>
          ))}
        </table>
      )}
    </section>
  );
}
