/** An item as the store keeps it (times in ms since the epoch). */
export interface StoredItem {
  externalId: string;
  category: string | null;
  attributes: Record<string, unknown>;
  expiresAt: string | null;
  available: boolean;
  feedManaged: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A user as the store keeps it (times in ms since the epoch). */
export interface StoredUser {
  externalId: string;
  attributes: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** The raw stored item as the catalog routes show it (and as projection paths address it). */
export function itemDocument(item: StoredItem): Record<string, unknown> {
  return {
    externalId: item.externalId,
    category: item.category,
    attributes: item.attributes,
    expiresAt: item.expiresAt,
    available: item.available,
    feedManaged: item.feedManaged,
    createdAt: new Date(item.createdAt).toISOString(),
    updatedAt: new Date(item.updatedAt).toISOString(),
  };
}

export function userDocument(user: StoredUser): Record<string, unknown> {
  return {
    externalId: user.externalId,
    attributes: user.attributes,
    createdAt: new Date(user.createdAt).toISOString(),
    updatedAt: new Date(user.updatedAt).toISOString(),
  };
}
