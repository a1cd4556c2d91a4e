import type { EmbeddingTemplate } from '../contract/vectors.js';

/**
 * The template of a tenant that has none (docs/guide.md, "Vectors and search"): search and similar-products work
 * before any template is written.
 */
const BUILT_IN_TEMPLATE = '{name} {category} {description}';

const PLACEHOLDER = /\{([^{}]+)\}/g;

/** What a template reads of an item. */
export interface TemplateItem {
  category: string | null;
  attributes: Readonly<Record<string, unknown>> | undefined;
}

/** A tenant's templates in the order they are tried: by slug. */
export function sortedTemplates(templates: ReadonlyMap<string, EmbeddingTemplate>): EmbeddingTemplate[] {
  return [...templates.values()].sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
}

/**
 * The template text that applies to an item: the first template (of `sorted`, see sortedTemplates)
 * whose `appliesTo` names its category (case-insensitively), else the default one, else none. A tenant
 * without templates uses BUILT_IN_TEMPLATE.
 */
export function templateFor(
  sorted: readonly EmbeddingTemplate[],
  category: string | null,
): string | undefined {
  if (sorted.length === 0) return BUILT_IN_TEMPLATE;
  if (category !== null) {
    const wanted = category.toLowerCase();
    const specific = sorted.find((t) => t.appliesTo.some((c) => c.toLowerCase() === wanted));
    if (specific) return specific.template;
  }
  return sorted.find((t) => t.isDefault)?.template;
}

/** A value as template text: arrays joined with spaces, objects and missing values as nothing. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value))
    return value
      .map(text)
      .filter((part) => part.length > 0)
      .join(' ');
  return '';
}

/** Reads `a.b.c` through nested attribute objects. */
function attribute(attributes: Readonly<Record<string, unknown>> | undefined, path: string): unknown {
  let value: unknown = attributes;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * An item's text under a template: `{category}` is the item's category, any other placeholder an
 * attribute (`{name}` and `{description}` included); missing values leave nothing, and whitespace is
 * collapsed. An empty result means the item has nothing to embed.
 */
export function renderTemplate(template: string, item: TemplateItem): string {
  return template
    .replace(PLACEHOLDER, (_, key: string) => {
      const name = key.trim();
      return name === 'category' ? (item.category ?? '') : text(attribute(item.attributes, name));
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/** The text an item is embedded from, or undefined when no template applies or it renders empty. */
export function itemText(sorted: readonly EmbeddingTemplate[], item: TemplateItem): string | undefined {
  const template = templateFor(sorted, item.category);
  if (template === undefined) return undefined;
  const rendered = renderTemplate(template, item);
  return rendered.length > 0 ? rendered : undefined;
}
