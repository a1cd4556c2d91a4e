/**
 * The dashboard end to end: the real daemon (with its demo tenant) serves the built page, headless
 * Chromium signs in, and what the page shows is compared with what the API answers for the same calls.
 * Needs `npm run build` (dist/dashboard) and Chromium (CHROMIUM_PATH, default /usr/bin/chromium; .ci/run
 * installs Debian's). Leaves a screenshot in test/artifacts/dashboard.png.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../dashboard/src/format.js';
import { call, startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { PATIENCE_MS } from '../support/eventually.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = path.join(ROOT, 'test/artifacts');
const PANELS = [
  'summary',
  'coverage',
  'volume',
  'by-type',
  'scenarios',
  'funnel',
  'top-items',
  'top-recommended',
  'algorithms',
  'experiments',
];

interface Demo {
  tenantId: string;
  apiKey: string;
}

/** A number as the page shows it ("12,345"). */
function shown(text: string | null): number {
  return Number((text ?? '').replace(/,/g, ''));
}

describe('dashboard (daemon + headless Chromium)', () => {
  let daemon: DaemonProcess;
  let browser: Browser;
  let demo: Demo;
  let headers: Record<string, string>;
  /** CSP reports and script errors seen by any page: none expected. */
  const problems: string[] = [];

  beforeAll(async () => {
    daemon = await startDaemonProcess({ args: ['--demo'] });
    demo = JSON.parse(readFileSync(path.join(daemon.dataDir, 'demo-credentials.json'), 'utf8')) as Demo;
    headers = { 'x-tenant-id': demo.tenantId, 'x-api-key': demo.apiKey };

    // Two scenarios with impressions and clicks, and an experiment between them, so that every section has
    // something to show (the demo shop logs interactions, not impressions; its events name the scenarios
    // home, pdp and cart, which these are not).
    for (const slug of ['banner-a', 'banner-b']) {
      const created = await call(daemon.url, 'POST', '/scenarios', {
        headers,
        body: { slug, name: `Banner ${slug.slice(-1).toUpperCase()}`, logicType: 'user-to-item' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const users = Array.from({ length: 60 }, (_, i) => `user-${String(i + 1).padStart(5, '0')}`);
    const items = ['sku-000001', 'sku-000002', 'sku-000003'];
    const impressions = users.flatMap((userId, i) => [
      { userId, itemIds: items, scenarioSlug: 'banner-a' },
      ...(i % 2 === 0 ? [{ userId, itemIds: items.slice(0, 2), scenarioSlug: 'banner-b' }] : []),
    ]);
    const logged = await call(daemon.url, 'POST', '/ingestion/impressions', {
      headers,
      body: { impressions },
    });
    expect(logged.status, JSON.stringify(logged.body)).toBe(200);
    const interactions = users.flatMap((userId, i) => [
      { userId, itemId: items[i % 3], type: 'view', scenarioSlug: i % 3 === 0 ? 'banner-b' : 'banner-a' },
      ...(i % 10 === 0
        ? [{ userId, itemId: items[0], type: 'purchase', scenarioSlug: 'banner-a', price: 25.5, profit: 5 }]
        : []),
      ...(i % 10 === 1
        ? [{ userId, itemId: items[1], type: 'purchase', scenarioSlug: 'banner-b', price: 12 }]
        : []),
      ...(i % 20 === 2 ? [{ userId, itemId: items[2], type: 'bookmark' }] : []),
    ]);
    const acted = await call(daemon.url, 'POST', '/ingestion/interactions', {
      headers,
      body: { interactions },
    });
    expect(acted.status, JSON.stringify(acted.body)).toBe(200);
    const experiment = await call(daemon.url, 'POST', '/experiments', {
      headers,
      body: {
        slug: 'banner-test',
        baseScenario: 'banner-a',
        variants: [
          { scenario: 'banner-a', weight: 50 },
          { scenario: 'banner-b', weight: 50 },
        ],
      },
    });
    expect(experiment.status, JSON.stringify(experiment.body)).toBe(201);

    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
  });

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
  });

  async function openPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // What the page waits for (the daemon's answers, their rendering) has no bound but the machine's load.
    page.setDefaultTimeout(PATIENCE_MS);
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
        problems.push(message.text());
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(`${daemon.url}/dashboard`);
    expect(response?.status()).toBe(200);
    return page;
  }

  async function signIn(page: Page, secret: string): Promise<void> {
    await page.getByTestId('tenant-id').fill(demo.tenantId);
    await page.getByTestId('credential').fill(secret);
    await page.getByTestId('sign-in-button').click();
  }

  /** Waits until no panel is loading; answers each panel's final state. */
  async function settled(page: Page): Promise<Record<string, string>> {
    const done = PANELS.map(
      (name) => `[data-panel="${name}"]:is([data-state="ready"], [data-state="error"])`,
    );
    await page
      .locator(done.join(', '))
      .nth(PANELS.length - 1)
      .waitFor({ state: 'attached' });
    const states: Record<string, string> = {};
    for (const name of PANELS) {
      states[name] = (await page.getByTestId(`panel-${name}`).getAttribute('data-state')) ?? '';
    }
    return states;
  }

  /** What the API answers to the page's own headers and range for `route`. */
  async function api<T>(route: string, range: { from: string; to: string }): Promise<T> {
    const separator = route.includes('?') ? '&' : '?';
    const response = await call<T>(
      daemon.url,
      'GET',
      `${route}${separator}from=${range.from}&to=${range.to}`,
      { headers },
    );
    expect(response.status, `${route}: ${JSON.stringify(response.body)}`).toBe(200);
    return response.body;
  }

  it('serves the page and its assets with the CSP, and 404s unknown assets in the error body', async () => {
    const page = await fetch(`${daemon.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'",
    );
    const script = await fetch(`${daemon.url}/dashboard/app.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const style = await fetch(`${daemon.url}/dashboard/app.css`);
    expect(style.headers.get('content-type')).toMatch(/^text\/css/);
    const missing = await call(daemon.url, 'GET', '/dashboard/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it('says when the credentials are refused', async () => {
    const page = await openPage();
    await signIn(page, 'not-a-key');
    await expect
      .poll(() => page.getByTestId('sign-in-error').textContent())
      .toMatch(/credentials were refused/);
    expect(await page.locator('#dashboard').isHidden()).toBe(true);
    await page.close();
  });

  it('shows the numbers the API gives, for the same range', async () => {
    const page = await openPage();
    await signIn(page, demo.apiKey);
    const states = await settled(page);
    const range = {
      from: await page.getByTestId('range-from').inputValue(),
      to: await page.getByTestId('range-to').inputValue(),
    };
    const today = new Date().toISOString().slice(0, 10);
    expect(range.to).toBe(today);

    // The screenshot first, so that it is there to look at even when a comparison below fails.
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    expect(states, JSON.stringify(states)).toEqual(Object.fromEntries(PANELS.map((name) => [name, 'ready'])));

    const summary = await api<{
      interactions: number;
      items: number;
      revenue: number;
      profit: number;
      byType: { bookmark: number };
    }>('/analytics/summary', range);
    expect(shown(await page.getByTestId('summary-interactions').textContent())).toBe(summary.interactions);
    expect(shown(await page.getByTestId('summary-items').textContent())).toBe(summary.items);
    // Revenue and profit as sums of prices with two decimals; the bookmarks beside the other types.
    expect(summary.revenue).toBeGreaterThan(0);
    expect(await page.getByTestId('summary-revenue').textContent()).toBe(formatMoney(summary.revenue));
    expect(await page.getByTestId('summary-profit').textContent()).toBe(formatMoney(summary.profit));
    expect(shown(await page.getByTestId('summary-bookmarks').textContent())).toBe(summary.byType.bookmark);
    expect(summary.byType.bookmark).toBeGreaterThan(0);
    const algorithms = await api<{ data: { algorithm: string; answers: number }[] }>(
      '/analytics/algorithms',
      range,
    );
    expect(algorithms.data.length).toBeGreaterThan(0);
    const first = algorithms.data[0];
    expect(shown(await page.getByTestId(`algorithms-answers-${first.algorithm}`).textContent())).toBe(
      first.answers,
    );
    expect(summary.interactions).toBeGreaterThan(0);

    const volume = await api<{ data: { count: number }[] }>('/analytics/interaction-volume', range);
    const volumeTotal = volume.data.reduce((sum, day) => sum + day.count, 0);
    expect(shown(await page.getByTestId('volume-total').textContent())).toBe(volumeTotal);

    const bannerA = await api<{ impressions: number; clicks: number; revenue: number }>(
      '/analytics/scenario/banner-a/summary',
      range,
    );
    expect(bannerA.impressions).toBeGreaterThan(0);
    expect(shown(await page.getByTestId('scenario-impressions-banner-a').textContent())).toBe(
      bannerA.impressions,
    );
    expect(shown(await page.getByTestId('scenario-clicks-banner-a').textContent())).toBe(bannerA.clicks);
    expect(bannerA.revenue).toBe(153);
    expect(await page.getByTestId('scenario-revenue-banner-a').textContent()).toBe('153.00');

    // The funnel chart follows the selected scenario.
    await page.getByTestId('scenario-select-banner-b').click();
    await expect.poll(() => page.getByTestId('funnel-scenario').textContent()).toBe('banner-b');
    const funnel = await api<{ data: { impressions: number }[] }>(
      '/analytics/scenario/banner-b/funnel-volume',
      range,
    );
    const funnelTotal = funnel.data.reduce((sum, day) => sum + day.impressions, 0);
    expect(shown(await page.getByTestId('funnel-total-impressions').textContent())).toBe(funnelTotal);

    const results = await call<{ variants: { scenario: string; ctr: number }[] }>(
      daemon.url,
      'GET',
      '/experiments/banner-test/results',
      { headers },
    );
    expect(results.status).toBe(200);
    const variantB = results.body.variants[1];
    expect(await page.getByTestId(`experiment-banner-test-ctr-${variantB.scenario}`).textContent()).toBe(
      `${(variantB.ctr * 100).toFixed(2)}%`,
    );
    expect(await page.getByTestId('experiment-banner-test-verdict-banner-b').textContent()).toMatch(
      /^(significant at 95%|not significant yet|not enough data yet)$/,
    );
    expect(await page.getByTestId('experiment-banner-test-revenue-banner-a').textContent()).toBe('153.00');
    expect(await page.getByTestId('experiment-banner-test-revenue-verdict-banner-b').textContent()).toMatch(
      /^(significant at 95%|not significant yet|not enough data yet)$/,
    );

    // The credentials stayed in memory: not in the URL, web storage or cookies.
    expect(page.url()).toBe(`${daemon.url}/dashboard`);
    // A string, evaluated in the page: this file is type-checked without the DOM's types.
    const stored = await page.evaluate(
      'localStorage.length + sessionStorage.length + document.cookie.length',
    );
    expect(stored).toBe(0);
    expect((await page.context().cookies()).length).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a failing section in that section only', async () => {
    const page = await openPage();
    // As a server without that route would answer.
    await page.route('**/analytics/catalog-coverage?*', (route) =>
      route.fulfill({
        status: 404,
        contentType: 'application/json',
        body: JSON.stringify({
          statusCode: 404,
          code: 'NOT_FOUND',
          error: 'Not Found',
          message: 'route not found',
        }),
      }),
    );
    await signIn(page, demo.apiKey);
    const states = await settled(page);
    expect(states.coverage).toBe('error');
    expect(await page.getByTestId('coverage-error').textContent()).toBe(
      'Not available on this server (NOT_FOUND: route not found).',
    );
    expect(Object.values(states).filter((state) => state === 'error')).toHaveLength(1);
    await page.close();
  });

  it('signs in with a bearer token (JWT) too', async () => {
    const issued = await call<{ token: string }>(daemon.url, 'POST', '/auth/token', { headers, body: {} });
    expect(issued.status).toBe(200);
    const page = await openPage();
    await signIn(page, issued.body.token);
    await page.getByTestId('summary-interactions').waitFor();
    expect(shown(await page.getByTestId('summary-interactions').textContent())).toBeGreaterThan(0);
    await page.getByTestId('sign-out').click();
    expect(await page.getByTestId('sign-in').isVisible()).toBe(true);
    expect(await page.getByTestId('summary-interactions').count()).toBe(0);
    await page.close();
  });
});
