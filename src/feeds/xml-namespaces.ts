/** Google Merchant's namespace: its elements are named `g:<name>` whatever prefix a document binds it to. */
export const GOOGLE_NAMESPACE = 'http://base.google.com/ns/1.0';
const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NAMESPACE = 'http://www.w3.org/2000/xmlns/';

/** Element names kept resolved at most. */
const MAX_NAMES = 1024;

/** An element's or attribute's name, resolved: its namespace, its local name, its name in a record. */
export interface ResolvedName {
  uri: string;
  local: string;
  /** `g:<local>` in Google's namespace, else the name as written. */
  key: string;
}

/**
 * The namespaces in scope as a document's elements open and close, for a saxes
 * parser run without its own namespace handling: saxes makes two objects per element for it, and then
 * resolves the element's prefix by walking the open elements. Here a name is resolved once for as long
 * as the declarations in scope stay the same (in a feed, those of its root). What saxes would refuse is
 * refused: an unbound or malformed prefix, the prefix `xmlns` on an element, a declaration of the
 * reserved prefixes or namespaces, an undeclared prefix in XML 1.0, two attributes of one expanded name.
 */
export class XmlNamespaces {
  private readonly bound = new Map<string, string>([
    ['xml', XML_NAMESPACE],
    ['xmlns', XMLNS_NAMESPACE],
  ]);
  /** Declarations in scope, innermost last: the depth of their element, the prefix, what they hide. */
  private readonly hidden: { depth: number; prefix: string; uri: string | undefined }[] = [];
  /** Element names resolved under the declarations in scope. */
  private readonly names = new Map<string, ResolvedName>();

  constructor(
    /** Fails the document (saxes' `fail`, which throws). */
    private readonly fail: (message: string) => void,
    /** The document's XML version, from its declaration. */
    private readonly version: () => string | undefined,
  ) {}

  /** Takes the namespace declarations among the attributes of an element that opens at `depth`. */
  declare(attributes: Record<string, string>, depth: number): void {
    for (const name in attributes) {
      let prefix: string;
      if (name === 'xmlns') prefix = '';
      else if (name.startsWith('xmlns:')) prefix = name.slice(6);
      else continue;
      const uri = attributes[name].trim();
      if (prefix !== '' && uri === '' && this.version() !== '1.1')
        this.fail('invalid attempt to undefine prefix in XML 1.0');
      this.checkBinding(prefix, uri);
      this.hidden.push({ depth, prefix, uri: this.bound.get(prefix) });
      // XML 1.1 undeclares a prefix bound to nothing; the default namespace bound to nothing is none.
      if (prefix !== '' && uri === '') this.bound.delete(prefix);
      else this.bound.set(prefix, uri);
      this.names.clear();
    }
    const seen = new Set<string>();
    for (const name in attributes) {
      const { uri, local } = this.attribute(name);
      const expanded = `{${uri}}${local}`;
      if (seen.has(expanded)) this.fail(`duplicate attribute: ${expanded}.`);
      seen.add(expanded);
    }
  }

  /** Ends the declarations of the element that closes at `depth`. */
  close(depth: number): void {
    while (this.hidden.length > 0 && this.hidden[this.hidden.length - 1].depth === depth) {
      const { prefix, uri } = this.hidden.pop()!;
      if (uri === undefined) this.bound.delete(prefix);
      else this.bound.set(prefix, uri);
      this.names.clear();
    }
  }

  /** An element's name under the declarations in scope (its own included). */
  element(name: string): ResolvedName {
    let resolved = this.names.get(name);
    if (resolved === undefined) {
      const { prefix, local } = this.split(name);
      if (prefix === 'xmlns') this.fail('tags may not have "xmlns" as prefix.');
      resolved = this.resolved(name, prefix, local, this.bound.get(prefix) ?? '');
      // A document of ever new names (the rest are a feed's few dozen) must not grow the memory it takes.
      if (this.names.size >= MAX_NAMES) this.names.clear();
      this.names.set(name, resolved);
    }
    return resolved;
  }

  /** An attribute's name (an unprefixed one is in no namespace); a declaration's namespace is XMLNS's. */
  attribute(name: string): ResolvedName {
    const { prefix, local } = this.split(name);
    if (prefix === '') return { uri: name === 'xmlns' ? XMLNS_NAMESPACE : '', local, key: name };
    return this.resolved(name, prefix, local, this.bound.get(prefix)!);
  }

  /** Whether an attribute declares a namespace rather than holding a value. */
  static isDeclaration(name: string): boolean {
    return name === 'xmlns' || name.startsWith('xmlns:');
  }

  /** saxes' checks of a declaration, with its messages. */
  private checkBinding(prefix: string, uri: string): void {
    if (prefix === 'xml' && uri !== XML_NAMESPACE) this.fail(`xml prefix must be bound to ${XML_NAMESPACE}.`);
    if (prefix === 'xmlns' && uri !== XMLNS_NAMESPACE)
      this.fail(`xmlns prefix must be bound to ${XMLNS_NAMESPACE}.`);
    if ((uri === XMLNS_NAMESPACE || uri === XML_NAMESPACE) && prefix === '')
      this.fail(`the default namespace may not be set to ${uri}.`);
    if (uri === XMLNS_NAMESPACE)
      this.fail(`may not assign a prefix (even "xmlns") to the URI ${XMLNS_NAMESPACE}.`);
    if (uri === XML_NAMESPACE && prefix !== 'xml')
      this.fail('may not assign the xml namespace to another prefix.');
  }

  private split(name: string): { prefix: string; local: string } {
    const colon = name.indexOf(':');
    if (colon === -1) return { prefix: '', local: name };
    const prefix = name.slice(0, colon);
    const local = name.slice(colon + 1);
    if (prefix === '' || local === '' || local.includes(':')) this.fail(`malformed name: ${name}.`);
    if (!this.bound.has(prefix)) this.fail(`unbound namespace prefix: ${JSON.stringify(prefix)}.`);
    return { prefix, local };
  }

  private resolved(name: string, prefix: string, local: string, uri: string): ResolvedName {
    const key = uri !== GOOGLE_NAMESPACE || prefix === 'g' ? name : `g:${local}`;
    return { uri, local, key };
  }
}
