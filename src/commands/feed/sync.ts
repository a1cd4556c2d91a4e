import { Command, Flags } from '@oclif/core';
import { SingleBar } from 'cli-progress';
import { TENANT_ID } from '../../contract/common.js';
import type { SyncResult } from '../../contract/feeds.js';
import type { SyncProgress } from '../../feeds/sync.js';
import type { SyncStatus } from '../../feeds/service.js';
import { operatorCall } from '../daemon-client.js';
import { feedNetwork } from '../../feeds/network.js';
import { feedPrivateNetworksFlag, storeFlags, storePlace } from '../flags.js';

export default class FeedSync extends Command {
  static override description =
    "Sync a tenant's active catalog feed now and print the result (JSON): through a running daemon, or on the store when none runs";
  static override examples = ['<%= config.bin %> feed sync --tenant acme --data-dir ./data'];
  static override flags = {
    tenant: Flags.string({ description: 'the tenant whose active feed syncs', required: true }),
    ...storeFlags,
    'feed-private-networks': feedPrivateNetworksFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(FeedSync);
    const tenantId = flags.tenant;
    const parsed = TENANT_ID.safeParse(tenantId);
    if (!parsed.success) this.error(parsed.error.issues[0].message, { exit: 2 });
    // A bar only on a terminal: a sync's length is not known before its last page, so it counts records.
    const bar = process.stdout.isTTY
      ? new SingleBar({
          format: 'feed sync | {records} records | page {pages}',
          hideCursor: true,
          stream: process.stdout,
        })
      : undefined;
    bar?.start(0, 0, { records: 0, pages: 0 });
    const show = (progress: SyncProgress | null) => {
      if (progress) bar?.update(0, { records: progress.records, pages: progress.pages });
    };
    const path = `/tenants/${encodeURIComponent(tenantId)}/feeds/sync`;
    const result = await operatorCall<SyncResult>(storePlace(flags), {
      method: 'POST',
      path,
      timeoutMs: 0,
      runtime: { feedNetwork: feedNetwork(flags['feed-private-networks']) },
      poll: { path, everyMs: 250, seen: (status) => show((status as SyncStatus).progress) },
      direct: async (runtime) => {
        const tenant = runtime.state.get(tenantId);
        if (!tenant) throw new Error(`tenant '${tenantId}' does not exist`);
        try {
          return await runtime.feeds.syncActive(tenant, show);
        } finally {
          // The daemon embeds every item again when it starts: nothing to embed here.
          await runtime.vectors.stop();
        }
      },
    })
      .catch((error: Error) => {
        bar?.stop();
        return this.error(error.message, { exit: 1 });
      })
      .finally(() => bar?.stop());
    this.log(JSON.stringify(result, null, 2));
  }
}
