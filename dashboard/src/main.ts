/**
 * The dashboard's entry: sign-in, the date range, and the panels. The credentials are kept in this
 * module's memory only (never in the URL, web storage or cookies); reloading the page signs out.
 */
import { Api } from './api.js';
import { byTypePanel, volumePanel } from './activity.js';
import { destroyCharts } from './charts.js';
import { byId } from './dom.js';
import { experimentsPanel } from './experiments.js';
import { checkRange, defaultRange, type DateRange } from './format.js';
import { algorithmsPanel, topItemsPanel, topRecommendedPanel } from './items.js';
import { coveragePanel, summaryPanel } from './overview.js';
import { loadPanel, type Loader } from './panel.js';
import { funnelPanel, scenariosPanel } from './scenarios.js';

const signInView = byId('sign-in');
const dashboardView = byId('dashboard');
const signInForm = byId<HTMLFormElement>('sign-in-form');
const tenantInput = byId<HTMLInputElement>('tenant-id');
const secretInput = byId<HTMLInputElement>('credential');
const signInError = byId('sign-in-error');
const signInButton = byId<HTMLButtonElement>('sign-in-button');
const rangeForm = byId<HTMLFormElement>('range-form');
const fromInput = byId<HTMLInputElement>('range-from');
const toInput = byId<HTMLInputElement>('range-to');
const rangeError = byId('range-error');
const tenantLabel = byId('tenant-label');

/** The signed-in session; undefined when signed out. */
let api: Api | undefined;
/** Aborts the panels' requests when a newer load replaces them. */
let loads = new AbortController();
let funnelLoad = new AbortController();
let selectedScenario: string | undefined;
/** The range the panels show: the form's, as of the last load (editing the form alone changes nothing). */
let range: DateRange = defaultRange();

function panel(name: string): HTMLElement {
  const element = document.querySelector<HTMLElement>(`[data-panel="${name}"]`);
  if (!element) throw new Error(`the page has no panel ${name}`);
  return element;
}

function formRange(): DateRange {
  return { from: fromInput.value, to: toInput.value };
}

function showFunnel(slug: string | undefined): void {
  if (!api) return;
  selectedScenario = slug;
  funnelLoad.abort();
  funnelLoad = new AbortController();
  const signal = AbortSignal.any([loads.signal, funnelLoad.signal]);
  void loadPanel(panel('funnel'), funnelPanel(slug), { api, range, signal });
}

/** (Re)loads every panel for the current range; each shows its own failure. */
function loadAll(): void {
  if (!api) return;
  loads.abort();
  loads = new AbortController();
  range = formRange();
  const context = { api, range, signal: loads.signal };
  const panels: Record<string, Loader> = {
    summary: summaryPanel,
    coverage: coveragePanel,
    volume: volumePanel,
    'by-type': byTypePanel,
    'top-items': topItemsPanel,
    'top-recommended': topRecommendedPanel,
    algorithms: algorithmsPanel,
    experiments: experimentsPanel,
  };
  for (const [name, loader] of Object.entries(panels)) void loadPanel(panel(name), loader, context);
  const scenarios = panel('scenarios');
  void loadPanel(
    scenarios,
    scenariosPanel(() => selectedScenario, showFunnel),
    context,
  ).then(() => {
    // Without a scenario list there is no funnel to draw; the scenarios panel says why.
    if (scenarios.dataset.state === 'error') showFunnel(undefined);
  });
}

signInForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const tenantId = tenantInput.value.trim();
  const secret = secretInput.value.trim();
  if (!tenantId || !secret) {
    signInError.textContent = 'Both the tenant id and a credential are needed.';
    return;
  }
  const candidate = new Api({ tenantId, secret });
  signInButton.disabled = true;
  signInError.textContent = '';
  // A cheap tenant route proves the credentials before the dashboard opens.
  candidate
    .get('/scenarios')
    .then(() => {
      api = candidate;
      secretInput.value = '';
      tenantLabel.textContent = tenantId;
      signInView.hidden = true;
      dashboardView.hidden = false;
      loadAll();
    })
    .catch((error: Error) => {
      signInError.textContent = error.message;
    })
    .finally(() => {
      signInButton.disabled = false;
    });
});

rangeForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const problem = checkRange(formRange());
  rangeError.textContent = problem ? `${problem[0].toUpperCase()}${problem.slice(1)}.` : '';
  if (!problem) loadAll();
});

byId('range-reset').addEventListener('click', () => {
  const range = defaultRange();
  fromInput.value = range.from;
  toInput.value = range.to;
  rangeError.textContent = '';
  loadAll();
});

byId('sign-out').addEventListener('click', () => {
  loads.abort();
  funnelLoad.abort();
  api = undefined;
  selectedScenario = undefined;
  destroyCharts(dashboardView);
  for (const body of dashboardView.querySelectorAll('.panel-body')) body.replaceChildren();
  for (const element of dashboardView.querySelectorAll<HTMLElement>('[data-panel]'))
    delete element.dataset.state;
  tenantLabel.textContent = '';
  dashboardView.hidden = true;
  signInView.hidden = false;
  secretInput.focus();
});

const initial = defaultRange();
fromInput.value = initial.from;
toInput.value = initial.to;
signInView.hidden = false;
tenantInput.focus();
