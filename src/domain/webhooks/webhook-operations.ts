import { read } from "../../db/reads";
import { partnerRead, partnerWrite } from "../access/partner-operation";
import { reachArgument, sideOf } from "../access/scope";
import { type DeliveryFilters, endpointDeliveries } from "./delivery-log";
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointChanges,
  endpointNotFound,
  listEndpoints,
  toEndpointObject,
  updateEndpoint,
} from "./endpoints";
import { type EventFilters, getEvent, listEvents } from "./event-log";
import { enableEndpoint } from "./health";
import { assertRecoverableSince, recoverDeliveries } from "./recovery";
import { deliveryToSendAgain, redeliver } from "./redelivery";
import { rotateActionSecret, rotateEndpointSecret } from "./secret-rotation";
import { endpointWithin, sendableEndpoint } from "./sendable-endpoint";
import { sendTestEvent } from "./test-events";

/*
 * What the partner API's webhook routes run (src/routes/webhooks/, src/routes/events.ts and the actions' secret
 * rotation; through src/admission/partner-admission.ts): endpoints, their deliveries, test events and the Events API.
 */

type OneRecord = { id: number };

export const listEndpointsOperation = partnerRead((side) => listEndpoints(side));

export const createEndpointOperation = partnerWrite({ write: createEndpoint });

/** `GET /webhooks/{id}`: the record as `GET /webhooks` lists it; another side's or business's is a missing one's 404. */
export const getEndpointOperation = partnerRead((side, id: number) =>
  read(endpointWithin({ reach: reachArgument(side), endpoint: id }), ([endpoint]) => {
    if (!endpoint) throw endpointNotFound();
    return toEndpointObject(endpoint);
  }),
);

/**
 * `PATCH /webhooks/{id}`: the credential alone, then one guarded update on the principal's side (two round trips,
 * docs/architecture.md, Performance budget); nothing is read first, since the update's own WHERE is the check.
 */
export const updateEndpointOperation = partnerWrite({
  write: (deps, principal, { id, changes }: OneRecord & { changes: EndpointChanges }) =>
    updateEndpoint(deps, sideOf(principal), id, changes),
});

export const deleteEndpointOperation = partnerWrite({
  write: (deps, principal, id: number) => deleteEndpoint(deps, sideOf(principal), id),
});

export const enableEndpointOperation = partnerWrite({
  write: (deps, principal, id: number) => enableEndpoint(deps, sideOf(principal), id),
});

type Rotation = OneRecord & { expiresIn?: number };

export const rotateEndpointSecretOperation = partnerWrite({
  write: (deps, principal, { id, expiresIn }: Rotation) => rotateEndpointSecret(deps, sideOf(principal), id, expiresIn),
});

export const rotateActionSecretOperation = partnerWrite({
  write: (deps, principal, { id, expiresIn }: Rotation) => rotateActionSecret(deps, sideOf(principal), id, expiresIn),
});

export const listDeliveriesOperation = partnerRead((side, { id, filters }: OneRecord & { filters: DeliveryFilters }) =>
  endpointDeliveries(side, id, filters, side.now),
);

/** The endpoint and the delivery are read with the credential, before the endpoint's budget is spent. */
export const redeliverOperation = partnerWrite({
  read: (side, { id, deliveryId }: OneRecord & { deliveryId: number }) =>
    deliveryToSendAgain(side, id, deliveryId, side.now),
  write: (deps, principal, _input, { endpoint, deliveryId }) => redeliver(deps, principal, endpoint.id, deliveryId),
});

export const recoverOperation = partnerWrite({
  read: (side, { id, since }: OneRecord & { since: string }) => {
    assertRecoverableSince(since, side.now);
    return sendableEndpoint(side, id);
  },
  write: (deps, principal, { since }, endpoint) => recoverDeliveries(deps, principal, endpoint.id, since),
});

type TestEvent = OneRecord & { event: Parameters<typeof sendTestEvent>[3] };

export const testEventOperation = partnerWrite({
  read: (side, { id }: TestEvent) => sendableEndpoint(side, id),
  write: (deps, principal, { event }, endpoint) => sendTestEvent(deps, principal, endpoint, event),
});

export const listEventsOperation = partnerRead((side, filters: EventFilters) => listEvents(side, filters, side.now));

export const getEventOperation = partnerRead((side, id: string) => getEvent(side, id, side.now));
