import { itemNeighboursOf, servingFactorsOf, type HistoryRows, type StateChange } from './state-changes.js';
import type { ServingState, TenantState } from './tenant-state.js';

/** Replays one change on a state that has seen every change before it. */
export function applyStateChange(state: ServingState, change: StateChange): void {
  if (change.kind === 'tenant') {
    state.add(change.tenantId);
    return;
  }
  const tenant = state.get(change.tenantId);
  if (!tenant) throw new Error(`state change for unknown tenant '${change.tenantId}'`);
  switch (change.kind) {
    case 'settings':
      tenant.replaceSettings(change.settings);
      break;
    case 'config':
      if (change.document) tenant.putConfigDocument(change.collection, change.key, change.document);
      else tenant.removeConfigDocument(change.collection, change.key);
      break;
    case 'items':
      for (const item of change.items) tenant.upsertCatalogItem(item);
      break;
    case 'interactions':
      applyHistoryRows(tenant, change.rows, change.now);
      break;
    case 'neighbours':
      tenant.replaceNeighbours(itemNeighboursOf(change.model), change.name);
      break;
    case 'factors':
      tenant.replaceFactors(servingFactorsOf(change.model));
      break;
    case 'forget':
      tenant.forgetIdentities(change.identities);
      break;
    case 'item-removals':
      tenant.removeItems(change.externalIds);
      break;
    case 'counts':
      tenant.readSharedCounts(change.name, change.counts);
      break;
    case 'histories':
      tenant.readSharedHistories(change.histories);
      break;
    case 'vector-base':
      tenant.replaceVectorBase(change.base);
      break;
    case 'vectors':
      tenant.setVectors(change.externalIds, change.vectors, change.hashes);
      break;
    case 'vector-removals':
      tenant.removeVectors(change.items);
      break;
  }
}

function applyHistoryRows(tenant: TenantState, rows: HistoryRows, now: number): void {
  const { itemIds, identities, countries, types, ts, weights, merged, indexes } = rows;
  for (let i = 0; i < itemIds.length; i++) {
    tenant.addToHistory(
      tenant.catalog.ensureId(itemIds[i]),
      identities[i],
      countries[i],
      types[i],
      ts[i],
      weights[i],
      merged[i] === 1,
      now,
      indexes[i],
    );
  }
}
