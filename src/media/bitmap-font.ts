/**
 * A tiny built-in bitmap font and a text rasteriser for it. The sandbox provider draws prompts onto
 * its images with this, so the pixels are the same on every machine: no system fonts, no SVG text.
 *
 * Glyphs cover printable ASCII (0x20-0x7E) on a 5x9 grid (7 rows of cap height plus a 2-row
 * descender), drawn by hand for this project. Any other character (one per code point) renders as a
 * filled box. Text is laid out on a 6-unit advance and an 11-unit line pitch, then every font pixel
 * becomes a `scale` x `scale` block.
 */

/** Glyph rows: up to 9 space-separated rows of `#` (ink) and `.` (blank); omitted rows are blank. */
const GLYPH_ROWS: Readonly<Record<string, string>> = {
  ' ': '',
  '!': '..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..',
  '"': '.#.#. .#.#. .#.#.',
  '#': '.#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.',
  $: '..#.. .#### #.#.. .###. ..#.# ####. ..#..',
  '%': '##... ##..# ...#. ..#.. .#... #..## ...##',
  '&': '.##.. #..#. #.#.. .#... #.#.# #..#. .##.#',
  "'": '..#.. ..#.. .#...',
  '(': '...#. ..#.. .#... .#... .#... ..#.. ...#.',
  ')': '.#... ..#.. ...#. ...#. ...#. ..#.. .#...',
  '*': '..... ..#.. #.#.# .###. #.#.# ..#.. .....',
  '+': '..... ..#.. ..#.. ##### ..#.. ..#.. .....',
  ',': '..... ..... ..... ..... ..... .##.. .##.. ..#.. .#...',
  '-': '..... ..... ..... ##### ..... ..... .....',
  '.': '..... ..... ..... ..... ..... .##.. .##..',
  '/': '..... ....# ...#. ..#.. .#... #.... .....',
  '0': '.###. #...# #..## #.#.# ##..# #...# .###.',
  '1': '..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.',
  '2': '.###. #...# ....# ...#. ..#.. .#... #####',
  '3': '##### ...#. ..#.. ...#. ....# #...# .###.',
  '4': '...#. ..##. .#.#. #..#. ##### ...#. ...#.',
  '5': '##### #.... ####. ....# ....# #...# .###.',
  '6': '..##. .#... #.... ####. #...# #...# .###.',
  '7': '##### ....# ...#. ..#.. .#... .#... .#...',
  '8': '.###. #...# #...# .###. #...# #...# .###.',
  '9': '.###. #...# #...# .#### ....# ...#. .##..',
  ':': '..... .##.. .##.. ..... ..... .##.. .##..',
  ';': '..... .##.. .##.. ..... ..... .##.. .##.. ..#.. .#...',
  '<': '...#. ..#.. .#... #.... .#... ..#.. ...#.',
  '=': '..... ..... ##### ..... ##### ..... .....',
  '>': '.#... ..#.. ...#. ....# ...#. ..#.. .#...',
  '?': '.###. #...# ....# ...#. ..#.. ..... ..#..',
  '@': '.###. #...# ....# .##.# #.#.# #.#.# .###.',
  A: '.###. #...# #...# ##### #...# #...# #...#',
  B: '####. #...# #...# ####. #...# #...# ####.',
  C: '.###. #...# #.... #.... #.... #...# .###.',
  D: '###.. #..#. #...# #...# #...# #..#. ###..',
  E: '##### #.... #.... ####. #.... #.... #####',
  F: '##### #.... #.... ####. #.... #.... #....',
  G: '.###. #...# #.... #.### #...# #...# .####',
  H: '#...# #...# #...# ##### #...# #...# #...#',
  I: '.###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
  J: '..### ...#. ...#. ...#. ...#. #..#. .##..',
  K: '#...# #..#. #.#.. ##... #.#.. #..#. #...#',
  L: '#.... #.... #.... #.... #.... #.... #####',
  M: '#...# ##.## #.#.# #.#.# #...# #...# #...#',
  N: '#...# #...# ##..# #.#.# #..## #...# #...#',
  O: '.###. #...# #...# #...# #...# #...# .###.',
  P: '####. #...# #...# ####. #.... #.... #....',
  Q: '.###. #...# #...# #...# #.#.# #..#. .##.#',
  R: '####. #...# #...# ####. #.#.. #..#. #...#',
  S: '.#### #.... #.... .###. ....# ....# ####.',
  T: '##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..',
  U: '#...# #...# #...# #...# #...# #...# .###.',
  V: '#...# #...# #...# #...# #...# .#.#. ..#..',
  W: '#...# #...# #...# #.#.# #.#.# #.#.# .#.#.',
  X: '#...# #...# .#.#. ..#.. .#.#. #...# #...#',
  Y: '#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..',
  Z: '##### ....# ...#. ..#.. .#... #.... #####',
  '[': '.###. .#... .#... .#... .#... .#... .###.',
  '\\': '..... #.... .#... ..#.. ...#. ....# .....',
  ']': '.###. ...#. ...#. ...#. ...#. ...#. .###.',
  '^': '..#.. .#.#. #...#',
  _: '..... ..... ..... ..... ..... ..... ..... #####',
  '`': '.#... ..#.. ...#.',
  a: '..... ..... .###. ....# .#### #...# .####',
  b: '#.... #.... #.##. ##..# #...# #...# ####.',
  c: '..... ..... .###. #.... #.... #...# .###.',
  d: '....# ....# .##.# #..## #...# #...# .####',
  e: '..... ..... .###. #...# ##### #.... .###.',
  f: '..##. .#..# .#... ###.. .#... .#... .#...',
  g: '..... ..... .#### #...# #...# #...# .#### ....# .###.',
  h: '#.... #.... #.##. ##..# #...# #...# #...#',
  i: '..#.. ..... .##.. ..#.. ..#.. ..#.. .###.',
  j: '...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..',
  k: '#.... #.... #..#. #.#.. ##... #.#.. #..#.',
  l: '.##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
  m: '..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#',
  n: '..... ..... #.##. ##..# #...# #...# #...#',
  o: '..... ..... .###. #...# #...# #...# .###.',
  p: '..... ..... ####. #...# #...# #...# ####. #.... #....',
  q: '..... ..... .#### #...# #...# #...# .#### ....# ....#',
  r: '..... ..... #.##. ##..# #.... #.... #....',
  s: '..... ..... .#### #.... .###. ....# ####.',
  t: '.#... .#... ###.. .#... .#... .#..# ..##.',
  u: '..... ..... #...# #...# #...# #..## .##.#',
  v: '..... ..... #...# #...# #...# .#.#. ..#..',
  w: '..... ..... #...# #...# #.#.# #.#.# .#.#.',
  x: '..... ..... #...# .#.#. ..#.. .#.#. #...#',
  y: '..... ..... #...# #...# #...# #...# .#### ....# .###.',
  z: '..... ..... ##### ...#. ..#.. .#... #####',
  '{': '...#. ..#.. ..#.. .#... ..#.. ..#.. ...#.',
  '|': '..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..',
  '}': '.#... ..#.. ..#.. ...#. ..#.. ..#.. .#...',
  '~': '..... ..... .#... #.#.# ...#.',
};

/** Geometry of the font, in font pixels (multiply by the scale for output pixels). */
export const FONT_METRICS = {
  /** Width of a glyph's ink box. */
  glyphWidth: 5,
  /** Height of capitals and digits (rows above the baseline). */
  capHeight: 7,
  /** Full glyph height, descender included. */
  glyphHeight: 9,
  /** Horizontal distance between the starts of two characters (1 column of spacing). */
  advance: 6,
  /** Vertical distance between the tops of two lines (2 rows of spacing). */
  lineHeight: 11,
} as const;

const { glyphWidth: GW, glyphHeight: GH, advance: ADV, lineHeight: LH } = FONT_METRICS;
const SPACE = 0x20;
const DOT = 0x2e;

/** Parses one glyph's rows into bitmasks (bit 4 = leftmost column). */
function parseGlyph(name: string, rows: string): Uint8Array {
  const out = new Uint8Array(GH);
  const parts = rows === '' ? [] : rows.split(' ');
  if (parts.length > GH) throw new Error(`glyph ${name} has too many rows`);
  parts.forEach((row, y) => {
    if (!/^[#.]{5}$/.test(row)) throw new Error(`glyph ${name} row ${y} is malformed`);
    let bits = 0;
    for (const c of row) bits = (bits << 1) | (c === '#' ? 1 : 0);
    out[y] = bits;
  });
  return out;
}

const GLYPHS: ReadonlyMap<number, Uint8Array> = new Map(
  Object.entries(GLYPH_ROWS).map(([ch, rows]) => [ch.codePointAt(0) ?? 0, parseGlyph(JSON.stringify(ch), rows)]),
);

/** Drawn for every character outside printable ASCII: a box filling the cap height. */
const MISSING_GLYPH = parseGlyph('missing', '##### ##### ##### ##### ##### ##### #####');

/** Whether the font has a real glyph for this character (otherwise it draws a filled box). */
export function hasGlyph(char: string): boolean {
  return GLYPHS.has(char.codePointAt(0) ?? -1);
}

/** Options of {@link renderTextMask}. */
export interface TextMaskOptions {
  /** Largest allowed mask width in output pixels. */
  maxWidth: number;
  /** Largest allowed mask height in output pixels. */
  maxHeight: number;
  /** Upper bound on the scale (output pixels per font pixel); the largest that fits is used when absent. */
  scale?: number;
  /** Horizontal alignment of lines inside the mask; default `left`. */
  align?: 'left' | 'center';
}

/**
 * A rendered text block. `data` is a single-channel 8-bit raster, row-major, exactly
 * `width * height` bytes: 255 where there is ink, 0 elsewhere. Empty text (or bounds too small for
 * a single character) gives a 0 x 0 mask with an empty buffer.
 */
export interface TextMask {
  data: Buffer;
  width: number;
  height: number;
  /** The scale used: every font pixel is a `scale` x `scale` block. */
  scale: number;
  /** The laid-out lines, as drawn. */
  lines: string[];
  /** Whether text was cut (with a trailing `...`) because even scale 1 did not fit. */
  truncated: boolean;
}

type Paragraph = number[][];

/** Splits text into paragraphs (hard line breaks) of words (runs of non-space code points). */
function tokenize(text: string): Paragraph[] {
  const trimmed = text.replace(/\r\n?/g, '\n').trim();
  if (trimmed === '') return [];
  return trimmed.split('\n').map((para) =>
    para
      .split(/\s+/)
      .filter((w) => w !== '')
      .map((w) => Array.from(w, (c) => c.codePointAt(0) ?? 0)),
  );
}

/** Greedy word wrap to `cols` characters; stops once more than `maxLines` lines exist. */
function wrap(paragraphs: Paragraph[], cols: number, maxLines: number): number[][] {
  const lines: number[][] = [];
  for (const words of paragraphs) {
    let line: number[] = [];
    for (const word of words) {
      if (line.length > 0 && line.length + 1 + word.length <= cols) {
        line.push(SPACE);
        for (const cp of word) line.push(cp);
        continue;
      }
      if (line.length > 0) lines.push(line);
      let start = 0;
      while (word.length - start > cols) {
        lines.push(word.slice(start, start + cols));
        start += cols;
      }
      line = word.slice(start);
      if (lines.length > maxLines) return lines;
    }
    lines.push(line);
    if (lines.length > maxLines) return lines;
  }
  return lines;
}

/** Characters per line and lines that fit the bounds at a scale. */
function capacity(maxWidth: number, maxHeight: number, scale: number): { cols: number; rows: number } {
  return {
    cols: Math.floor((maxWidth / scale + 1) / ADV),
    rows: Math.floor((maxHeight / scale + 2) / LH),
  };
}

/** The wrapped lines at this scale, or null when they do not fit the bounds. */
function layoutAt(paragraphs: Paragraph[], maxWidth: number, maxHeight: number, scale: number): number[][] | null {
  const { cols, rows } = capacity(maxWidth, maxHeight, scale);
  if (cols < 1 || rows < 1) return null;
  const lines = wrap(paragraphs, cols, rows);
  return lines.length <= rows ? lines : null;
}

/** The lines that fit at scale 1, the last one ending in `...` (as many dots as fit). */
function truncatedLayout(paragraphs: Paragraph[], maxWidth: number, maxHeight: number): number[][] {
  const { cols, rows } = capacity(maxWidth, maxHeight, 1);
  if (cols < 1 || rows < 1) return [];
  const wrapped = wrap(paragraphs, cols, rows);
  const lines = wrapped.slice(0, rows);
  // Pull the start of the first hidden line up so a short last line still shows as much as fits.
  const tail = lines[rows - 1] ?? [];
  const next = wrapped[rows] ?? [];
  let last = (tail.length > 0 && next.length > 0 ? [...tail, SPACE, ...next] : [...tail, ...next]).slice(0, Math.max(0, cols - 3));
  while (last.length > 0 && last[last.length - 1] === SPACE) last.pop();
  last = [...last, DOT, DOT, DOT].slice(0, cols);
  lines[rows - 1] = last;
  return lines;
}

/** Draws laid-out lines into a fresh single-channel mask. */
function rasterize(lines: number[][], scale: number, align: 'left' | 'center'): { data: Buffer; width: number; height: number } {
  const maxLen = lines.reduce((m, l) => Math.max(m, l.length), 0);
  if (maxLen === 0) return { data: Buffer.alloc(0), width: 0, height: 0 };
  const width = (maxLen * ADV - 1) * scale;
  const height = (lines.length * LH - 2) * scale;
  const data = Buffer.alloc(width * height);
  lines.forEach((line, li) => {
    const glyphs = line.map((cp) => GLYPHS.get(cp) ?? MISSING_GLYPH);
    const x0 = align === 'center' ? Math.floor(((maxLen - line.length) * ADV * scale) / 2) : 0;
    for (let gy = 0; gy < GH; gy++) {
      const rowStart = (li * LH + gy) * scale * width;
      let ink = false;
      glyphs.forEach((glyph, ci) => {
        const bits = glyph[gy] ?? 0;
        if (bits === 0) return;
        ink = true;
        for (let bx = 0; bx < GW; bx++) {
          if ((bits & (1 << (GW - 1 - bx))) === 0) continue;
          const x = rowStart + x0 + (ci * ADV + bx) * scale;
          data.fill(255, x, x + scale);
        }
      });
      if (!ink) continue;
      for (let k = 1; k < scale; k++) data.copyWithin(rowStart + k * width, rowStart, rowStart + width);
    }
  });
  return { data, width, height };
}

/**
 * Word-wraps `text` and draws it at the largest integer scale (at most `opts.scale` when given, at
 * least 1) whose block fits inside `maxWidth` x `maxHeight`. Hard line breaks are kept, runs of
 * other whitespace collapse to one space, words longer than a line are split. When even scale 1
 * does not fit, the text is cut and its last visible line ends in `...`. The mask is exactly the
 * size of the text block (see {@link TextMask} for the buffer format) and never exceeds the bounds.
 */
export function renderTextMask(text: string, opts: TextMaskOptions): TextMask {
  const maxWidth = Number.isFinite(opts.maxWidth) ? Math.max(0, Math.floor(opts.maxWidth)) : 0;
  const maxHeight = Number.isFinite(opts.maxHeight) ? Math.max(0, Math.floor(opts.maxHeight)) : 0;
  const align = opts.align ?? 'left';
  const paragraphs = tokenize(text);
  let upper = Math.floor(Math.min(maxWidth / GW, maxHeight / GH));
  if (opts.scale !== undefined && Number.isFinite(opts.scale)) upper = Math.min(upper, Math.floor(opts.scale));
  upper = Math.max(1, upper);

  let scale = 1;
  let truncated = false;
  let lines = paragraphs.length === 0 ? [] : layoutAt(paragraphs, maxWidth, maxHeight, 1);
  if (lines === null) {
    lines = truncatedLayout(paragraphs, maxWidth, maxHeight);
    truncated = true;
  } else if (lines.length > 0) {
    // Fitting is monotone in the scale (a wider line never wraps into more lines): binary search.
    let lo = 1;
    let hi = upper;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (layoutAt(paragraphs, maxWidth, maxHeight, mid) !== null) lo = mid;
      else hi = mid - 1;
    }
    scale = lo;
    lines = layoutAt(paragraphs, maxWidth, maxHeight, scale) ?? lines;
  }
  const mask = rasterize(lines, scale, align);
  return { ...mask, scale, lines: lines.map((l) => String.fromCodePoint(...l)), truncated };
}
