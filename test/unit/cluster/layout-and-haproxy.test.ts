import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { haproxyConfig } from '../../../src/cluster/haproxy.js';
import { clusterLayout, portsOf } from '../../../src/cluster/layout.js';
import { onPath } from '../../../src/cluster/programs.js';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-haproxy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the cluster layout', () => {
  it('defaults to ./cluster-data, port 8080 and two daemons, every port of 127.0.0.1 distinct', () => {
    const layout = clusterLayout({}, '/srv/shop');
    expect(layout.dir).toBe('/srv/shop/cluster-data');
    expect(layout).toMatchObject({ port: 8080, embeddingsPort: 8081, postgresPort: 8086, redisPort: 8087 });
    expect(layout.daemons).toEqual([
      { n: 1, port: 8082, embeddingsPort: 8083 },
      { n: 2, port: 8084, embeddingsPort: 8085 },
    ]);
    const ports = portsOf(clusterLayout({ NEXTREC_CLUSTER_DAEMONS: '5', NEXTREC_CLUSTER_PORT: '9000' }));
    expect(new Set(ports.map(([port]) => port)).size).toBe(ports.length);
    expect(ports.map(([port]) => port)).toEqual(Array.from({ length: 14 }, (_, i) => 9000 + i));
  });

  it('names the variable that is out of range', () => {
    expect(() => clusterLayout({ NEXTREC_CLUSTER_DAEMONS: '0' })).toThrow(
      "NEXTREC_CLUSTER_DAEMONS must be an integer from 1 to 64, not '0'",
    );
    expect(() => clusterLayout({ NEXTREC_CLUSTER_PORT: '65534' })).toThrow(/^NEXTREC_CLUSTER_PORT must be/);
  });
});

describe("haproxy's configuration", () => {
  it('is valid for haproxy, balances both frontends round-robin over every daemon, with health checks', async () => {
    const layout = clusterLayout({ NEXTREC_CLUSTER_DAEMONS: '3', NEXTREC_CLUSTER_DIR: dir });
    const config = haproxyConfig(layout);
    const file = path.join(dir, 'haproxy.cfg');
    writeFileSync(file, config);
    // haproxy's own check of the file: `-c` exits non-zero on any error.
    const haproxy = onPath('haproxy');
    expect(haproxy, 'haproxy is installed (Debian package haproxy)').toBeDefined();
    await run(haproxy!, ['-c', '-q', '-f', file]);

    expect(config.match(/balance roundrobin/g)).toHaveLength(2);
    expect(config).toContain('bind 127.0.0.1:8080');
    expect(config).toContain('bind 127.0.0.1:8081');
    expect(config).toContain('option httpchk GET /health/ready');
    expect(config).toContain('option httpchk GET /health\n');
    for (const { n, port, embeddingsPort } of layout.daemons) {
      expect(config).toContain(`server daemon-${n} 127.0.0.1:${port} check`);
      expect(config).toContain(`server daemon-${n} 127.0.0.1:${embeddingsPort} check`);
    }
  });
});
