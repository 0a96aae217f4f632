/**
 * Motion prompt length (D15, G27): CJK characters are counted one by
 * one (at most 500), other text in words (at most 1000). Mixed text shares one budget: a CJK
 * character uses two word units, a word one, at most 1000 units in all, so pure Chinese text gets
 * exactly 500 characters and pure English exactly 1000 words.
 */

/** Most CJK characters a motion prompt may hold (pure CJK text). */
export const MOTION_PROMPT_MAX_CJK = 500;
/** Most words a motion prompt may hold (text without CJK characters). */
export const MOTION_PROMPT_MAX_WORDS = 1000;
/** Most characters of a motion prompt whatever it counts as: one 500,000-letter "word" is still a prompt no model reads (G16). */
export const MOTION_PROMPT_MAX_CHARS = 20_000;
/** Word units one CJK character uses in mixed text (1000 / 500). */
export const CJK_WEIGHT = MOTION_PROMPT_MAX_WORDS / MOTION_PROMPT_MAX_CJK;

/**
 * CJK characters: Han ideographs, kana, Hangul, CJK symbols and punctuation (`，。「」`), and
 * full-width forms. Each one counts alone, with or without spaces around it.
 */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303F\u30FC\uFF00-\uFFEF]/u;
const CJK_GLOBAL = new RegExp(CJK.source, 'gu');
/** A word: a run of characters between whitespace or CJK characters holding a letter or digit. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

export interface PromptCount {
  /** CJK characters, counted one by one. */
  cjk: number;
  /** Words of the other text (runs split by whitespace and CJK characters; punctuation-only runs do not count). */
  words: number;
  /** `cjk * 2 + words`: the budget used, at most 1000. */
  units: number;
}

/** Counts a motion prompt by the rule above. */
export function countMotionPrompt(text: string): PromptCount {
  const cjk = (text.match(CJK_GLOBAL) ?? []).length;
  const words = text
    .replace(CJK_GLOBAL, ' ')
    .split(/\s+/u)
    .filter((run) => WORD_CHAR.test(run)).length;
  return { cjk, words, units: cjk * CJK_WEIGHT + words };
}

/** The reason a prompt is too long, or null when it fits. */
export function motionPromptProblem(text: string): string | null {
  if (text.length > MOTION_PROMPT_MAX_CHARS) return `is too long: at most ${MOTION_PROMPT_MAX_CHARS} characters are allowed (got ${text.length})`;
  const { cjk, words, units } = countMotionPrompt(text);
  if (units <= MOTION_PROMPT_MAX_WORDS) return null;
  if (words === 0) return `is too long: at most ${MOTION_PROMPT_MAX_CJK} Chinese (CJK) characters are allowed (got ${cjk})`;
  if (cjk === 0) return `is too long: at most ${MOTION_PROMPT_MAX_WORDS} words are allowed (got ${words})`;
  return (
    `is too long: mixed text may hold at most ${MOTION_PROMPT_MAX_WORDS} units, where a Chinese (CJK) character counts 2 and a word 1 ` +
    `(got ${cjk} CJK characters and ${words} words = ${units} units)`
  );
}
