import type { SQL } from "drizzle-orm";
import type { EventName } from "../../names-and-limits";
import type { EventData } from "../../schemas/events";
import type { AddressedTo } from "./audience";

/*
 * An event about to be emitted, its `data` typed by its name: the schema of that event's data (src/schemas/events.ts,
 * `EVENT_DATA`, the document's `webhooks` section) is what the emitter must build, so that emitting `booking.created`
 * with an order, or `intake.enabled` without its `reason`, fails tsc instead of a partner's handler.
 */

/** Members of `data` set by SQL in the write batch, each an expression of the member's own type. */
type SqlMembers<T> = { readonly [P in keyof T]?: SQL<T[P]> };

type DraftOf<E extends EventName> = AddressedTo & {
  event: E;
  /** The data as delivered (`withDataFromSql`: once the write batch has set the members it names). */
  data: EventData<E>;
  /**
   * A sample sent on the partner's request (`POST /webhooks/{id}/test`), not a change of the business: its envelope
   * says `"test": true` (docs/webhooks.md, Test events).
   */
  test?: true;
  /**
   * Members of `data` whose value is only known inside the write batch (the id of a row inserted by an earlier
   * statement of it, such as `response_id`): set into the stored envelope by SQL, in the same transaction. Made by
   * `withDataFromSql`.
   */
  dataFromSql?: SqlMembers<EventData<E>>;
};

/**
 * An event about to be emitted: one of the union of each event name with its own data (`EventDraft<"ping">` is a
 * ping's only), so that an event and data of different events do not type-check.
 */
export type EventDraft<E extends EventName = EventName> = { [N in E]: DraftOf<N> }[E];

/** `data` with its members `K` not known yet: null, which keeps their place in the envelope, until SQL sets them. */
type Pending<T, K extends PropertyKey> = { [P in keyof T]: P extends K ? null : T[P] };

/**
 * A draft whose members `K` of `data` the write batch sets by SQL (src/domain/webhooks/outbox/write.ts, `storedEnvelope`):
 * each is null in `data`, and given in `dataFromSql` as an SQL expression of the member's type (`sql<number>`), so
 * the stored envelope is of the event's schema. Every other member is checked as in any draft.
 */
export function withDataFromSql<E extends EventName, K extends keyof EventData<E> & string>(
  draft: AddressedTo & {
    event: E;
    data: Pending<EventData<E>, K>;
    dataFromSql: { readonly [P in K]: SQL<EventData<E>[P]> };
  },
): EventDraft<E> {
  // The one assertion: the members that are null here are the ones `dataFromSql` sets, by their type, in the batch.
  return { ...draft, data: draft.data as EventData<E> } as DraftOf<E> as EventDraft<E>;
}
