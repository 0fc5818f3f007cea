import type { BOOKING_STATUSES, FULFILLMENT_TYPES, ORDER_STATUSES } from "../../db/schema";

/*
 * The realistic data a sandbox business starts with (docs/decisions.md, Sandbox businesses), and what the local seed
 * gives its demo businesses (scripts/seed.ts): a hair salon's bookings, shop orders and texts, relative to the day
 * they are made. Written once here; src/domain/sandbox/demo-rows.ts turns it into rows.
 */

/** A service of the salon: its id, name, price in the business's currency, and length; `from` for a starting price. */
export type Service = { id: string; name: string; price: number; minutes: number; from?: boolean };

/** How a service's price is written: "€45", "from €120". */
export const priceText = (service: Service, symbol: string): string =>
  `${service.from ? "from " : ""}${symbol}${service.price}`;

export const SERVICES = {
  cut: { id: "cut-and-blow-dry", name: "Cut & blow-dry", price: 45, minutes: 45 },
  beard: { id: "beard-trim", name: "Beard trim", price: 20, minutes: 30 },
  colour: { id: "full-colour", name: "Full colour", price: 85, minutes: 90 },
  balayage: { id: "balayage", name: "Balayage", price: 120, minutes: 150, from: true },
  kids: { id: "kids-cut", name: "Kids cut", price: 25, minutes: 30 },
  home: { id: "home-visit-cut", name: "Haircut at home", price: 65, minutes: 60 },
  mens: { id: "mens-cut", name: "Men's cut", price: 30, minutes: 30 },
  highlights: { id: "highlights", name: "Highlights", price: 95, minutes: 120 },
} satisfies Record<string, Service>;

/** The clients who book and order; `null` where the client gave none. */
export const CLIENTS = {
  emma: { name: "Emma de Vries", email: "emma.devries@example.com", phone: "+31 6 12345678" },
  daan: { name: "Daan Jansen", email: "daan.jansen@example.com", phone: "+31 6 23456789" },
  sophie: { name: "Sophie Bakker", email: "sophie.bakker@example.com", phone: null },
  lotte: { name: "Lotte Visser", email: "lotte.visser@example.com", phone: "+31 6 34567890" },
  noah: { name: "Noah Smit", email: null, phone: "+31 6 45678901" },
  anna: { name: "Anna Mulder", email: "anna.mulder@example.com", phone: "+31 6 56789012" },
  liam: { name: "Liam Bos", email: "liam.bos@example.com", phone: "+31 6 67890123" },
  julia: { name: "Julia Peters", email: "julia.peters@example.com", phone: null },
  sem: { name: "Sem Hendriks", email: null, phone: "+31 6 78901234" },
  mila: { name: "Mila van Dijk", email: "mila.vandijk@example.com", phone: "+31 6 89012345" },
} satisfies Record<string, { name: string; email: string | null; phone: string | null }>;

export type DemoBooking = {
  status: (typeof BOOKING_STATUSES)[number];
  /** The appointment's date, in days from today in the business's time zone, and its local time. */
  day: number;
  time: string;
  service: keyof typeof SERVICES;
  client: keyof typeof CLIENTS;
  /** When it was booked, in hours before now. */
  bookedHoursAgo: number;
  /** `paid` pays the service's price; `deposit_paid` pays 30 of an agreed price 10 above it; unpaid unless said. */
  payment?: "paid" | "deposit_paid" | "refunded";
  notes?: string;
  location?: string;
  movedFrom?: { day: number; time: string };
  /** Booked through a Secretary conversation. */
  conversation?: true;
};

export const DEMO_BOOKINGS: DemoBooking[] = [
  { status: "completed", day: -21, time: "11:00", service: "highlights", client: "mila", bookedHoursAgo: 700 },
  {
    status: "completed",
    day: -14,
    time: "16:30",
    service: "mens",
    client: "liam",
    bookedHoursAgo: 400,
    payment: "paid",
  },
  { status: "cancelled", day: -10, time: "10:00", service: "kids", client: "sem", bookedHoursAgo: 300 },
  {
    status: "completed",
    day: -7,
    time: "10:00",
    service: "cut",
    client: "emma",
    bookedHoursAgo: 288,
    payment: "paid",
    conversation: true,
  },
  {
    status: "no_show",
    day: -3,
    time: "14:30",
    service: "beard",
    client: "daan",
    bookedHoursAgo: 147,
    notes: "Did not answer the reminder call.",
  },
  {
    status: "completed",
    day: -1,
    time: "15:00",
    service: "colour",
    client: "julia",
    bookedHoursAgo: 90,
    payment: "paid",
  },
  {
    status: "cancelled",
    day: 2,
    time: "11:00",
    service: "colour",
    client: "sophie",
    bookedHoursAgo: 96,
    payment: "refunded",
    notes: "Cancelled by the client: 'can't make it, sorry!'",
  },
  {
    status: "confirmed",
    day: 1,
    time: "09:30",
    service: "balayage",
    client: "lotte",
    bookedHoursAgo: 127,
    payment: "deposit_paid",
    notes: "Long hair, wants a natural look.",
    movedFrom: { day: 3, time: "16:00" },
    conversation: true,
  },
  { status: "confirmed", day: 3, time: "17:00", service: "mens", client: "liam", bookedHoursAgo: 20 },
  {
    status: "pending",
    day: 5,
    time: "15:00",
    service: "kids",
    client: "noah",
    bookedHoursAgo: 2,
    notes: "Asked on WhatsApp; waiting for the owner to confirm.",
    conversation: true,
  },
  {
    status: "confirmed",
    day: 8,
    time: "13:00",
    service: "home",
    client: "anna",
    bookedHoursAgo: 29,
    payment: "paid",
    location: "Prinsengracht 263, 1016 GV Amsterdam",
  },
  {
    status: "confirmed",
    day: 12,
    time: "10:30",
    service: "cut",
    client: "mila",
    bookedHoursAgo: 6,
    conversation: true,
  },
];

/** What the shop sells, `{symbol}` in a name written as the business writes prices. */
export const PRODUCTS = {
  shampoo: { service_id: "repair-shampoo", name: "Repair shampoo 250 ml", unit_price: 18.5 },
  oil: { service_id: "argan-oil", name: "Argan hair oil", unit_price: 24 },
  giftCard: { service_id: "gift-card-50", name: "Gift card {symbol}50", unit_price: 50 },
  comb: { service_id: "wooden-comb", name: "Wooden comb", unit_price: 9.95 },
} satisfies Record<string, { service_id: string; name: string; unit_price: number }>;

export type DemoOrder = {
  status: (typeof ORDER_STATUSES)[number];
  items: Partial<Record<keyof typeof PRODUCTS, number>>;
  client: keyof typeof CLIENTS;
  orderedHoursAgo: number;
  fulfillment?: (typeof FULFILLMENT_TYPES)[number];
  /** Paid in full unless said: `unpaid` pays on pickup or delivery, `refunded` paid nothing in the end. */
  payment?: "unpaid" | "refunded";
  /** Hours from now when it was ready, or is expected to be. */
  readyInHours?: number;
  estimatedReadyInHours?: number;
  delivery?: { address: string; notes: string; tracking: string; carrier: string };
  notes?: string;
  conversation?: true;
};

export const DEMO_ORDERS: DemoOrder[] = [
  {
    status: "pending",
    items: { shampoo: 2, comb: 1 },
    client: "emma",
    orderedHoursAgo: 1,
    payment: "unpaid",
    notes: "Will pick up after her next appointment.",
    conversation: true,
  },
  { status: "preparing", items: { oil: 1 }, client: "lotte", orderedHoursAgo: 5, estimatedReadyInHours: 3 },
  { status: "ready_for_pickup", items: { giftCard: 2 }, client: "sophie", orderedHoursAgo: 26, readyInHours: -2 },
  {
    status: "out_for_delivery",
    items: { shampoo: 1, oil: 1 },
    client: "anna",
    orderedHoursAgo: 30,
    fulfillment: "delivery",
    delivery: {
      address: "Keizersgracht 123, 1015 CJ Amsterdam",
      notes: "Ring twice; third floor.",
      tracking: "3SBELL0000001",
      carrier: "PostNL",
    },
  },
  { status: "fulfilled", items: { comb: 3 }, client: "daan", orderedHoursAgo: 96, readyInHours: -72 },
  {
    status: "cancelled",
    items: { oil: 2 },
    client: "noah",
    orderedHoursAgo: 48,
    payment: "refunded",
    notes: "Out of stock; refunded.",
  },
];

/** The texts a sandbox business's test key has pushed (`PUT /knowledge/{key}`); `{name}` is the business's name. */
export const DEMO_KNOWLEDGE = [
  {
    key: "opening-hours",
    title: "Opening hours",
    content:
      "{name} is open Tuesday to Saturday from 09:00 to 18:00, and until 20:00 on Thursdays. Closed on Sundays and Mondays.",
  },
  {
    key: "cancellation-policy",
    title: "Cancellation policy",
    content:
      "Appointments can be moved or cancelled free of charge up to 24 hours before they start. Later cancellations and no-shows are charged half the service's price.",
  },
  {
    key: "parking-and-access",
    title: "Parking and access",
    content:
      "Paid street parking is right in front of the salon. The salon is on the ground floor, with step-free access and a wheelchair-friendly washbasin.",
  },
];

/** The website the local seed's owner added as a knowledge source (scripts/seed.ts). */
export const DEMO_OWNER_SOURCE = {
  kind: "website",
  title: "{shortName} website",
  location: "https://{handle}.example",
};
