/** What a list of bookings or orders takes besides its own filters (docs/decisions.md, Paging and sync). */
export type PageFilters = { limit: number; updatedSince?: string; startingAfter?: number };
