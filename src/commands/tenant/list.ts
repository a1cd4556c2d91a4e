import { Command } from '@oclif/core';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace } from '../flags.js';

export default class TenantList extends Command {
  static override summary = 'List tenant ids (JSON)';
  static override description =
    'Prints { "tenants": [...] }. Works through a daemon running on the data dir, or on the store when none runs.';
  static override examples = ['<%= config.bin %> tenant list --data-dir ./data'];
  static override flags = { ...storeFlags };

  async run(): Promise<void> {
    const { flags } = await this.parse(TenantList);
    const result = await operatorCall<{ tenants: string[] }>(storePlace(flags), {
      method: 'GET',
      path: '/tenants',
      direct: async (runtime) => ({ tenants: runtime.state.ids() }),
    }).catch((error: Error) => this.error(error.message, { exit: 1 }));
    this.log(JSON.stringify(result, null, 2));
  }
}
