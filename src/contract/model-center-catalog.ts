/**
 * The published Model Center models (docs/reference/api/model-center.md#models), with their Model
 * IDs. The studio, gen and kinetic rows give display names; the catalog assigns slug ids to them
 * (D17) and keeps the display names, so a display name sent as `model` is a 400 that
 * names the Model ID to use.
 */
export interface ModelCenterModel {
  id: string;
  group: string;
  /** What the model makes: `image` models answer with `image_url`, `video` ones with `video_url`. */
  kind: 'image' | 'video';
  /** Display names that are not Model IDs (they fail to resolve, with a hint). */
  displayNames: readonly string[];
  credits: number;
}

const m = (id: string, group: string, kind: 'image' | 'video', credits: number, displayNames: string[] = []): ModelCenterModel => ({
  id,
  group,
  kind,
  credits,
  displayNames,
});

export const MODEL_CENTER_MODELS: readonly ModelCenterModel[] = [
  m('imagegen_5.0Pro', 'imagegen', 'image', 4, ['Imagegen 5.0 Pro']),
  m('imagegen-5.0', 'imagegen', 'image', 2, ['Imagegen 5.0']),
  m('sd_2.5_discount_v1', 'motion 2.5 official discount', 'video', 20),
  m('sd_2.5_special_v1', 'motion 2.5 special', 'video', 20),
  m('sd_2.0_fast_special', 'motion 2.0 special', 'video', 12),
  m('sd_2.0_mini_special', 'motion 2.0 special', 'video', 8),
  m('sd_2.0_special', 'motion 2.0 special', 'video', 15),
  m('sd_2.0_discount', 'motion 2.0 official discount', 'video', 12),
  m('sd_2.0_fast_discount', 'motion 2.0 official discount', 'video', 10),
  m('sd_2.0_mini_discount', 'motion 2.0 official discount', 'video', 6),
  m('motion 1.5_pro', 'motion 1.5', 'video', 15),
  m('vidmodel-H3-768p-c1', 'vidmodel', 'video', 12),
  m('video_30_10_10', 'videos', 'video', 10),
  m('videos_10_0_0-720p', 'videos', 'video', 10),
  m('videos_900_720p-c1', 'videos', 'video', 10),
  m('studio-1.0-i2v', 'studio', 'video', 10, ['Studio 1.0 Image-to-Video']),
  m('studio-1.0-r2v', 'studio', 'video', 10, ['Studio 1.0 Reference-to-Video']),
  m('studio-1.0-t2v', 'studio', 'video', 10, ['Studio 1.0 Text-to-Video']),
  m('studio-1.1-i2v', 'studio', 'video', 12, ['Studio 1.1 Image-to-Video']),
  m('studio-1.1-r2v', 'studio', 'video', 12, ['Studio 1.1 Reference-to-Video']),
  m('studio-1.1-t2v', 'studio', 'video', 12, ['Studio 1.1 Text-to-Video']),
  m('studio-1.1-v2-i2v', 'studio', 'video', 14, ['Studio 1.1 v2 Image To Video']),
  m('studio-1.1-v2-reference-raw-video', 'studio', 'video', 14, ['Studio 1.1 v2 Reference Raw Video']),
  m('studio-1.1-v2-t2v', 'studio', 'video', 14, ['Studio 1.1 v2 Text To Video']),
  m('gen-2.7-editvideo', 'gen', 'video', 15, ['Gen2.7 Editvideo']),
  m('gen-2.7-i2v', 'gen', 'video', 15, ['Gen2.7 image To Video']),
  m('gen-2.7-reference-raw-video', 'gen', 'video', 15, ['Gen2.7 Reference Raw Video']),
  m('gen-2.7-t2v', 'gen', 'video', 15, ['Gen2.7 Text To Video']),
  m('gen3.0-prime-r2v', 'gen', 'video', 20),
  m('gen3.0-r2v', 'gen', 'video', 15),
  m('kinetic-o3-video', 'kinetic', 'video', 20, ['Kinetic O3 Video Generation']),
];

const normalise = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim();
const BY_DISPLAY = new Map(MODEL_CENTER_MODELS.flatMap((x) => x.displayNames.map((d) => [normalise(d), x] as const)));
const BY_ID = new Map(MODEL_CENTER_MODELS.map((x) => [x.id, x]));

export function findModelCenterModel(id: string): ModelCenterModel | undefined {
  return BY_ID.get(id);
}

/**
 * The model whose display name (or a near spelling of its id) this is, to name the right Model ID
 * in the error: the same but for case, spaces, `_` and `-`, else the one id within two typed
 * letters (an edit: one added, dropped or changed; G485) when no other is as near.
 */
export function suggestModelCenterModel(name: string): ModelCenterModel | undefined {
  const n = normalise(name);
  const same = BY_DISPLAY.get(n) ?? MODEL_CENTER_MODELS.find((x) => normalise(x.id) === n);
  if (same) return same;
  let best: ModelCenterModel | undefined;
  let bestDistance = MAX_TYPOS + 1;
  let tied = false;
  for (const x of MODEL_CENTER_MODELS) {
    const d = editDistance(n, normalise(x.id));
    if (d < bestDistance) [best, bestDistance, tied] = [x, d, false];
    else if (d === bestDistance) tied = true;
  }
  return best && !tied && n.length > MAX_TYPOS * 2 ? best : undefined;
}

const MAX_TYPOS = 2;

/** Levenshtein distance of `a` and `b`: letters added, dropped or changed (31 short ids: no bound needed). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
