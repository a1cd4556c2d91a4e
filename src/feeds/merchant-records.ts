import { TextDecoder } from 'node:util';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { MalformedDocumentError } from './answer.js';
import { addValue, RECORDS_PER_BATCH, type SourceRecord } from './document-records.js';
import { XmlNamespaces } from './xml-namespaces.js';

const ATOM_NAMESPACE = 'http://www.w3.org/2005/Atom';

/** An element of an item being read: its name, its text so far, its child elements once it has some. */
interface Open {
  name: string;
  text: string;
  children: SourceRecord | undefined;
  attributes: SaxesTagPlain['attributes'];
}

/**
 * Reads an RSS 2.0 (`rss > channel > item`) or Atom (`feed > entry`) document, Google Merchant's two feed
 * formats (CONTRACT.md, "Integrator features", **Feed formats.**), as it streams in: each item becomes an
 * object of its child elements by qualified name (`g:price`, `title`), a repeated element an array of
 * its values, an element with child elements (`g:shipping`) an object of them. Only the elements of the
 * item being read are held. Throws a MalformedDocumentError for XML that is not well-formed or a root
 * that is neither `rss` nor `feed`.
 */
class MerchantReader {
  /** Namespaces are resolved by `namespaces`, at less cost than saxes' own (see xml-namespaces.ts). */
  private readonly parser = new SaxesParser<{ xmlns: false; position: true }>({
    xmlns: false,
    position: true,
  });
  private readonly namespaces = new XmlNamespaces(
    (message) => this.parser.fail(message),
    () => this.parser.xmlDecl.version,
  );
  /** Whether the element being opened has attributes (they may declare namespaces). */
  private attributed = false;
  private depth = 0;
  private itemDepth = 0;
  private inChannel = false;
  /** The item being read, and its open descendants (innermost last): the first `opened` of `open`. */
  private item: SourceRecord | undefined;
  /** Reused from element to element, so that reading one makes no object but its value. */
  private readonly open: Open[] = [];
  private opened = 0;
  records: SourceRecord[] = [];

  constructor() {
    this.parser.on('attribute', () => (this.attributed = true));
    this.parser.on('opentag', (tag) => this.openTag(tag));
    this.parser.on('closetag', () => this.closeTag());
    this.parser.on('text', (text) => this.text(text));
    this.parser.on('cdata', (text) => this.text(text));
    this.parser.on('error', (error) => {
      throw new MalformedDocumentError(`the answer is not valid XML: ${error.message}`);
    });
  }

  write(text: string): void {
    this.parser.write(text);
  }

  close(): void {
    this.parser.close();
  }

  private openTag(tag: SaxesTagPlain): void {
    this.depth++;
    if (this.attributed) {
      this.attributed = false;
      this.namespaces.declare(tag.attributes, this.depth);
    }
    const name = this.namespaces.element(tag.name);
    if (this.item) {
      if (this.opened > 0) this.open[this.opened - 1].children ??= {};
      const element = this.open[this.opened++];
      if (element === undefined) {
        this.open.push({ name: name.key, text: '', children: undefined, attributes: tag.attributes });
        return;
      }
      element.name = name.key;
      element.text = '';
      element.children = undefined;
      element.attributes = tag.attributes;
      return;
    }
    if (this.depth === 1) {
      if (name.local === 'rss' && name.uri === '') this.itemDepth = 3;
      else if (name.local === 'feed' && (name.uri === ATOM_NAMESPACE || name.uri === '')) this.itemDepth = 2;
      else this.parser.fail(`the document's root is <${tag.name}>, not an RSS 2.0 <rss> or an Atom <feed>`);
      return;
    }
    if (this.itemDepth === 3 && this.depth === 2) {
      this.inChannel = name.local === 'channel' && name.uri === '';
      return;
    }
    const isItem =
      this.depth === this.itemDepth &&
      (this.itemDepth === 3 ? this.inChannel && name.local === 'item' : name.local === 'entry');
    if (isItem) this.item = {};
  }

  private closeTag(): void {
    if (this.item) this.closeElement();
    // After the element's value: its attributes' names are resolved with its own declarations.
    this.namespaces.close(this.depth--);
  }

  /** An element of the item being read closes (or the item itself). */
  private closeElement(): void {
    if (this.opened === 0) {
      this.records.push(this.item!);
      this.item = undefined;
      return;
    }
    const element = this.open[--this.opened];
    const value = this.valueOf(element);
    element.children = undefined;
    const parent = this.opened > 0 ? this.open[this.opened - 1].children! : this.item!;
    if (value !== undefined) addValue(parent, element.name, value);
  }

  /**
   * An element's value: the object of its child elements when it has some, else its text (trimmed), else,
   * for an element with neither (Atom's `<link href="…"/>`), the object of its attributes; an element
   * with none of these has no value.
   */
  private valueOf(element: Open): unknown {
    if (element.children) return element.children;
    const text = element.text.trim();
    if (text !== '') return text;
    let attributes: SourceRecord | undefined;
    for (const [name, value] of Object.entries(element.attributes)) {
      if (XmlNamespaces.isDeclaration(name)) continue;
      attributes ??= {};
      addValue(attributes, this.namespaces.attribute(name).key, value);
    }
    return attributes;
  }

  private text(text: string): void {
    if (this.opened === 0) return;
    const element = this.open[this.opened - 1];
    if (!element.children) element.text += text;
  }
}

/** The items of a Merchant feed's bytes, in batches of RECORDS_PER_BATCH. */
export async function* merchantRecords(bytes: AsyncIterable<Buffer>): AsyncGenerator<SourceRecord[]> {
  const reader = new MerchantReader();
  let decoder: TextDecoder | undefined;
  // The document's first bytes, until they hold its XML declaration (which names its encoding).
  let head: Buffer | undefined = Buffer.alloc(0);
  try {
    for await (const chunk of bytes) {
      if (head !== undefined) {
        head = Buffer.concat([head, chunk]);
        if (head.length < DECLARATION_BYTES && !head.includes(0x3e)) continue;
        decoder = decoderFor(head);
        reader.write(decoder.decode(head, { stream: true }));
        head = undefined;
      } else reader.write(decoder!.decode(chunk, { stream: true }));
      while (reader.records.length >= RECORDS_PER_BATCH) yield reader.records.splice(0, RECORDS_PER_BATCH);
    }
    decoder ??= decoderFor(head ?? Buffer.alloc(0));
    reader.write(decoder.decode(head));
    reader.close();
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_ENCODING_INVALID_ENCODED_DATA') throw error;
    throw new MalformedDocumentError(`the answer is not valid XML: its bytes are not ${decoder?.encoding}`);
  }
  while (reader.records.length > 0) yield reader.records.splice(0, RECORDS_PER_BATCH);
}

/** How far an XML declaration is looked for. */
const DECLARATION_BYTES = 200;

/**
 * The decoder of a document's text: UTF-8 (a byte order mark is dropped), unless its XML declaration
 * names another encoding TextDecoder knows (`ISO-8859-1`, `windows-1252`, ...). Bytes that are not of
 * that encoding fail the document.
 */
function decoderFor(head: Buffer): TextDecoder {
  const declared = /^(?:\xEF\xBB\xBF)?<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(
    head.subarray(0, DECLARATION_BYTES).toString('latin1'),
  )?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8', { fatal: true });
  } catch {
    throw new MalformedDocumentError(`the document's encoding ${declared} is not supported`);
  }
}
