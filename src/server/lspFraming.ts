// The stdio transport's framing, checked before vscode-jsonrpc sees it. Its reader takes any
// `Content-Length` parseInt accepts: `abc` is reported and the frame's bytes stay in the buffer,
// `-5` makes it slice backwards, `99999999999999` makes it buffer whatever follows, forever. Each
// leaves the server alive but deaf to every later message. Here a frame is accepted only when its
// header is well formed and its length is a plain decimal within the message cap; anything else
// is a broken stream we cannot find the next message in, so the server says why and exits (the
// client restarts it) instead of listening to noise.
import { Transform, TransformCallback } from 'stream';

/** Largest header block: two short fields; real clients send under 100 bytes. */
const MAX_HEADER_BYTES = 8 * 1024;
/** Largest message body: a didOpen of a 32 MiB source, JSON-escaped, fits. */
const MAX_MESSAGE_BYTES = 96 * 1024 * 1024;

export class LspFrameError extends Error {}

const END = Buffer.from('\r\n\r\n', 'latin1');
const FIELD = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/**
 * Splits a byte stream into LSP messages (`Content-Length: N\r\n\r\n` + N bytes). push() returns
 * the complete frames so far, normalised to a Content-Length header only; it throws LspFrameError
 * on the first malformed one, and again on every later push. It never holds more than one header
 * block (maxHeader) plus one body (maxBody) of input.
 */
export class LspFrameGuard {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** The body length of the frame whose header was read; null while reading a header. */
  private expected: number | null = null;
  private failure: LspFrameError | null = null;

  constructor(
    readonly maxBody = MAX_MESSAGE_BYTES,
    readonly maxHeader = MAX_HEADER_BYTES,
  ) {}

  /** Bytes received and not yet part of a returned frame. */
  get buffered(): number {
    return this.size;
  }

  push(chunk: Uint8Array): Buffer[] {
    if (this.failure) throw this.failure;
    const frames: Buffer[] = [];
    if (chunk.length) {
      this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.size += chunk.length;
    }
    try {
      for (;;) {
        if (this.expected === null && !this.readHeader()) break;
        if (this.size < this.expected!) break;
        const body = this.take(this.expected!);
        frames.push(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'latin1'), body]));
        this.expected = null;
      }
    } catch (e) {
      this.failure = e instanceof LspFrameError ? e : new LspFrameError(String(e));
      this.chunks.length = 0;
      this.size = 0;
      throw this.failure;
    }
    return frames;
  }

  /** Reads a complete header block when there is one; false while it is still incomplete. */
  private readHeader(): boolean {
    const head = Buffer.concat(this.chunks, Math.min(this.size, this.maxHeader + END.length));
    const end = head.indexOf(END);
    if (end < 0) {
      if (this.size > this.maxHeader + END.length - 1)
        throw new LspFrameError(`no end of the message header within ${this.maxHeader} bytes`);
      return false;
    }
    this.expected = parseHeader(head.subarray(0, end).toString('latin1'), this.maxBody);
    this.take(end + END.length);
    return true;
  }

  private take(n: number): Buffer {
    const out = Buffer.concat(this.chunks, n);
    let left = n;
    while (left > 0) {
      const c = this.chunks[0];
      if (c.length <= left) {
        this.chunks.shift();
        left -= c.length;
      } else {
        this.chunks[0] = c.subarray(left);
        left = 0;
      }
    }
    this.size -= n;
    return out;
  }
}

/** The body length a header block announces; throws LspFrameError when the block is malformed. */
export function parseHeader(block: string, maxBody = MAX_MESSAGE_BYTES): number {
  let length: number | null = null;
  for (const line of block.split('\r\n')) {
    const m = FIELD.exec(line);
    if (!m || /[^\x20-\x7e\t]/.test(line)) throw new LspFrameError(`malformed message header line ${JSON.stringify(line.slice(0, 80))}`);
    const name = m[1].toLowerCase();
    const value = m[2];
    if (name === 'content-length') {
      if (length !== null) throw new LspFrameError('the message header has more than one Content-Length');
      if (!/^[0-9]+$/.test(value)) throw new LspFrameError(`Content-Length ${JSON.stringify(value.slice(0, 40))} is not a byte count`);
      length = value.length > 12 ? Infinity : Number(value);
      if (length < 1 || length > maxBody)
        throw new LspFrameError(`Content-Length ${value.slice(0, 40)} is out of range (1 to ${maxBody} bytes)`);
    } else if (name === 'content-type') {
      const charset = CHARSET.exec(value)?.[1].toLowerCase();
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
        throw new LspFrameError(`Content-Type charset ${JSON.stringify(charset)} is not utf-8`);
    }
  }
  if (length === null) throw new LspFrameError('the message header has no Content-Length');
  return length;
}

/** A stream of checked frames from `input`: an 'error' (LspFrameError) on the first malformed one. */
export function guardedInput(input: NodeJS.ReadableStream, guard = new LspFrameGuard()): Transform {
  const out = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      let frames: Buffer[];
      try {
        frames = guard.push(chunk);
      } catch (e) {
        done(e as Error);
        return;
      }
      for (const f of frames) this.push(f);
      done();
    },
  });
  input.pipe(out);
  return out;
}
