/**
 * Which text a vector was embedded from: shared by the daemon's indexer and the vectors job; the pages of
 * answers find a user's pages by it too (engine/page-request.ts).
 */

/** FNV-1a over the text's UTF-16 units: tells a changed text from an unchanged one. */
export function textHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The hash a vector's text is known by: the embedder's model is part of it, so a new model re-embeds. */
export function vectorTextHash(model: string, text: string): number {
  return textHash(`${model}\u0000${text}`);
}
