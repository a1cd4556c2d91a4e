import { Command, Flags } from '@oclif/core';
import { issueToken } from '../../tenants/jwt.js';
import { jwtSecret } from '../../tenants/secrets.js';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace } from '../flags.js';

/** The longest lifetime the CLI issues; `POST /auth/token` stops at a day. */
const MAX_TTL_S = 30 * 86_400;
const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `15m`, `1h`, `7d` → seconds; NaN when malformed. */
function parseTtl(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  return match ? Number(match[1]) * UNIT_S[match[2] || 's'] : NaN;
}

export default class TokenIssue extends Command {
  static override description =
    'Issue a bearer token (JWT, HS256) for a tenant and print { token, expiresAt } (JSON)';
  static override examples = ['<%= config.bin %> token issue --tenant acme --ttl 1h'];
  static override flags = {
    tenant: Flags.string({ description: 'the tenant the token is for', required: true }),
    ttl: Flags.string({ description: 'lifetime: 90s, 15m, 1h, 7d (at most 30d)', default: '1h' }),
    ...storeFlags,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(TokenIssue);
    const ttl = parseTtl(flags.ttl);
    if (!Number.isFinite(ttl) || ttl < 1 || ttl > MAX_TTL_S) {
      this.error(`--ttl must be a lifetime such as 1h or 7d, at most 30d (got '${flags.ttl}')`, { exit: 2 });
    }
    const { tenants } = await operatorCall<{ tenants: string[] }>(storePlace(flags), {
      method: 'GET',
      path: '/tenants',
      direct: async (runtime) => ({ tenants: runtime.state.ids() }),
    }).catch((error: Error) => this.error(error.message, { exit: 1 }));
    if (!tenants.includes(flags.tenant)) this.error(`tenant '${flags.tenant}' does not exist`, { exit: 1 });
    const issued = await issueToken(jwtSecret(flags['data-dir']), flags.tenant, ttl);
    this.log(JSON.stringify(issued, null, 2));
  }
}
