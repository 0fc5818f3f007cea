import type { OwnerAttempt, OwnerDelivery, OwnerHistory } from "../../domain/webhooks/owner-deliveries";
import { withHiddenShown } from "../../lib/text";
import type { DashboardEnv } from "./dashboard-env";
import { ButtonForm, Tag } from "./layout";
import { When } from "./time-text";
import { eventInWords } from "./webhook-event-words";

/*
 * An endpoint's delivery history on its page (docs/decisions.md, The owner's dashboard): 20 a page, newest first, with
 * Older and Newer links; each delivery with its payload folded away, its marks, and each attempt's status and the start
 * of the receiver's answer. The answer is the partner's text: JSX escapes it, and a <pre> shows it as text.
 */

type Session = DashboardEnv["Variables"]["session"];

const Attempt = (props: { attempt: OwnerAttempt }) => {
  const { attempt } = props;
  return (
    <li>
      <When at={attempt.attemptedAt} precision="second" />: {attempt.statusCode ?? "no answer"}
      {attempt.error && ` — ${attempt.error}`} ({attempt.durationMs} ms)
      {attempt.answerExcerpt !== null && (
        <details>
          <summary>Answer</summary>
          <pre data-testid="answer">
            <code>{withHiddenShown(attempt.answerExcerpt)}</code>
          </pre>
        </details>
      )}
    </li>
  );
};

const Delivery = (props: { delivery: OwnerDelivery; endpointId: number; enabled: boolean; session: Session }) => {
  const { delivery } = props;
  return (
    <div class="card" data-testid={`delivery-${delivery.id}`}>
      <p>
        <strong>{eventInWords(delivery.event)}</strong> <code>{delivery.event}</code>{" "}
        <Tag good={delivery.status !== "failed"}>{delivery.status}</Tag>
        {delivery.test && (
          <>
            {" "}
            <span class="tag">Test</span>
          </>
        )}
        {delivery.sentAgain && (
          <>
            {" "}
            <span class="tag">Sent again</span>
          </>
        )}{" "}
        <span class="muted">
          <When at={delivery.createdAt} precision="second" />
        </span>
      </p>
      <details>
        <summary>Payload</summary>
        <pre data-testid="payload">
          <code>{delivery.payload}</code>
        </pre>
      </details>
      {delivery.attempts.length === 0 ? (
        <p class="muted">Not attempted yet.</p>
      ) : (
        <ul>
          {delivery.attempts.map((attempt) => (
            <Attempt attempt={attempt} />
          ))}
        </ul>
      )}
      {props.enabled && (
        <ButtonForm
          session={props.session}
          action={`/dashboard/webhooks/${props.endpointId}/deliveries/${delivery.id}/send-again`}
          label="Send again"
        />
      )}
    </div>
  );
};

export const DeliveryHistory = (props: {
  history: OwnerHistory;
  endpointId: number;
  enabled: boolean;
  session: Session;
  paged: boolean;
}) => {
  const { history, endpointId } = props;
  const base = `/dashboard/webhooks/${endpointId}`;
  return (
    <section data-testid="deliveries">
      <h2>Deliveries</h2>
      {history.deliveries.length === 0 && <p>{props.paged ? "No more deliveries here." : "None yet."}</p>}
      {history.deliveries.map((delivery) => (
        <Delivery delivery={delivery} endpointId={endpointId} enabled={props.enabled} session={props.session} />
      ))}
      {(history.newer !== undefined || history.older !== undefined) && (
        <nav aria-label="Delivery pages">
          <p>
            {history.newer !== undefined && (
              <a href={`${base}?newer=${history.newer}`} rel="prev">
                Newer
              </a>
            )}
            {history.newer !== undefined && history.older !== undefined && " · "}
            {history.older !== undefined && (
              <a href={`${base}?older=${history.older}`} rel="next">
                Older
              </a>
            )}
          </p>
        </nav>
      )}
    </section>
  );
};
