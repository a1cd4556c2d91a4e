import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Reads a secret file, or creates it (owner-only) with a fresh value; `created` says which. */
export function readOrCreateSecret(file: string, make: () => string): { value: string; created: boolean } {
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false };
  const value = make();
  // Written whole under a name of this process's, then linked into place: daemons sharing a data dir
  // that start together never read a secret half written, and the first link wins.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, `${value}\n`, { mode: 0o600 });
  try {
    linkSync(partial, file);
    return { value, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process created it first: use theirs.
    return { value: readFileSync(file, 'utf8').trim(), created: false };
  } finally {
    rmSync(partial, { force: true });
  }
}

export function randomSecret(prefix: string): string {
  return `${prefix}${randomBytes(24).toString('base64url')}`;
}

/** The key every derived token comes from; never leaves the data dir. */
export function serverSecret(dataDir: string): string {
  return readOrCreateSecret(path.join(dataDir, 'server.secret'), () => randomBytes(32).toString('hex')).value;
}

/** The HS256 key of bearer tokens: `NEXTREC_JWT_SECRET`, else `<data-dir>/jwt.secret` (created once). */
export function jwtSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.NEXTREC_JWT_SECRET?.trim();
  if (fromEnv) return fromEnv;
  return readOrCreateSecret(path.join(dataDir, 'jwt.secret'), () => randomBytes(32).toString('hex')).value;
}

export interface OperatorKey {
  value: string;
  /** Set when the key was generated just now and has to be shown once. */
  generatedFile?: string;
}

export function operatorKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): OperatorKey {
  const fromEnv = env.NEXTREC_ADMIN_KEY?.trim();
  if (fromEnv) return { value: fromEnv };
  const file = path.join(dataDir, 'admin.key');
  const { value, created } = readOrCreateSecret(file, () => randomSecret('nradm_'));
  return created ? { value, generatedFile: file } : { value };
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two secrets in time independent of where they differ. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(sha256(a), 'hex'), Buffer.from(sha256(b), 'hex'));
}
