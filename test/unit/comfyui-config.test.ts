/**
 * providers.json entries of type `comfyui` (G150-G151): `{type, baseUrl}` alone is a
 * provider with the built-in templates (ComfyUI's default address when baseUrl is left out);
 * operator templates are read at start from workflow files relative to providers.json and their
 * slots checked against the workflow; routes name a template of the kind the model makes. Every
 * mistake is a ConfigError naming the place in the file. The built-in workflows ship with the build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInTemplates } from '../../src/providers/comfyui/builtin-templates.js';
import { readProvidersFile } from '../../src/providers/providers-file.js';
import { previewTemplate } from '../helpers/comfyui-jobs.js';
import { configError, configFiles } from '../helpers/config-files.js';

const { dir, file } = configFiles('mediagate-comfyui-config-');
const read = (content: unknown) => readProvidersFile({ MEDIAGATE_PROVIDERS: file(content) });
const workflow = (name: string, content: unknown): string => {
  fs.writeFileSync(path.join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return name;
};
const wf = workflow('preview.json', previewTemplate().workflow);
const entry = (template: Record<string, unknown>) => ({
  type: 'comfyui',
  baseUrl: 'http://10.0.0.7:8188',
  models: { custom: { workflow: wf, makes: 'image', slots: { prompt: '6.text' }, ...template } },
});

describe('providers.json: type comfyui', () => {
  it('{type, baseUrl} alone: a provider with no templates of its own, serving pic by a route without a model', () => {
    const cfg = read({ providers: { comfy: { type: 'comfyui', baseUrl: 'http://127.0.0.1:8188' } }, routes: { pic: [{ provider: 'comfy' }] } })!;
    expect(cfg.providers[0]).toEqual({ id: 'comfy', type: 'comfyui', baseUrl: 'http://127.0.0.1:8188', models: {} });
    expect(cfg.routes.pic).toEqual([{ provider: 'comfy', priority: 0, weight: 1 }]);
    expect(read({ providers: { comfy: { type: 'comfyui' } } })!.providers[0]!.baseUrl).toBe('http://127.0.0.1:8188');
  });

  it("an operator's template: the workflow read relative to providers.json, slots resolved to node inputs", () => {
    const cfg = read({
      providers: {
        comfy: entry({ slots: { prompt: '6.text', seed: ['3.seed'], width: { to: '5.width', multiple: 64 }, height: '5.height' }, outputs: ['9'] }),
      },
      routes: { 'pic-2': [{ provider: 'comfy', model: 'custom' }] },
    })!;
    const t = (cfg.providers[0]!.models as Record<string, { workflow: unknown; slots: unknown; outputs: unknown; makes: string }>).custom!;
    expect(t.workflow).toEqual(previewTemplate().workflow);
    expect(t.slots).toEqual({
      prompt: { targets: [{ node: '6', input: 'text' }] },
      seed: { targets: [{ node: '3', input: 'seed' }] },
      width: { targets: [{ node: '5', input: 'width' }], multiple: 64 },
      height: { targets: [{ node: '5', input: 'height' }] },
    });
    expect(t).toMatchObject({ makes: 'image', outputs: ['9'] });
  });

  it.each([
    ['a workflow file that is not there', { workflow: 'nope.json' }, /providers\.comfy\.models\.custom: cannot read the workflow ".*nope\.json": ENOENT/],
    ['a workflow that is not JSON', { workflow: workflow('bad.json', '{"3": ') }, /models\.custom: the workflow ".*bad\.json" is not valid JSON/],
    [
      'a UI workflow (not Export (API))',
      { workflow: workflow('ui.json', { nodes: [], links: [], version: 0.4 }) },
      /models\.custom: the workflow is a ComfyUI UI workflow .* export it with "Export \(API\)"/,
    ],
    ['a node without class_type', { workflow: workflow('noclass.json', { 1: { inputs: {} } }) }, /the workflow node "1" has no class_type/],
    ['a slot on a node the workflow lacks', { slots: { prompt: '66.text' } }, /models\.custom: slots\.prompt: the workflow has no node "66"/],
    [
      'a slot on an input the node lacks',
      { slots: { prompt: '6.txt' } },
      /slots\.prompt: node "6" \(CLIPTextEncode\) has no input "txt" \(it has text, clip\)/,
    ],
    ['a slot on a link input', { slots: { prompt: '6.clip' } }, /slots\.prompt: input "clip" of node "6" \(CLIPTextEncode\) is a link from another node/],
    [
      'two slots on one input',
      { slots: { prompt: '6.text', negative_prompt: '6.text' } },
      /slots\.negative_prompt: "6\.text" is also the target of slot prompt/,
    ],
    ['width without height', { slots: { width: '5.width' } }, /slots: width and height go together/],
    ['multiple on a prompt', { slots: { prompt: { to: '6.text', multiple: 8 } } }, /slots\.prompt: "multiple" applies to width, height and frames only/],
    ['fps on width', { slots: { width: { to: '5.width', fps: 24 }, height: '5.height' } }, /"plus" and "fps" apply to frames only/],
    ['reference_image_17', { slots: { reference_image_17: '6.text' } }, /reference images are reference_image_1 to reference_image_16/],
    ['an output node the workflow lacks', { outputs: ['99'] }, /outputs: the workflow has no node "99"/],
    ['a target that is no node.input', { slots: { prompt: 'text' } }, /providers\.comfy\.models\.custom\.slots\.prompt must be/],
    ['makes audio', { makes: 'audio' }, /models\.custom\.makes must be one of image, video/],
    ['an unknown field', { title: 'x' }, /models\.custom has an unknown field "title"/],
  ])('%s: a ConfigError naming it', (_name, template, message) => {
    expect(configError(() => read({ providers: { comfy: entry(template) } })).message).toMatch(message);
  });

  it('routes name a template the provider has (its own or a built-in), of the kind the model makes', () => {
    const providers = { comfy: entry({}) };
    expect(configError(() => read({ providers, routes: { pic: [{ provider: 'comfy', model: 'sdxl' }] } })).message).toMatch(
      /routes\.pic\[0\]: provider "comfy" \(type comfyui\) has no template "sdxl" \(it has image, image-to-video, custom; add one under providers\.comfy\.models\)/,
    );
    expect(configError(() => read({ providers, routes: { pic: [{ provider: 'comfy', model: 'image-to-video' }] } })).message).toMatch(
      /routes\.pic\[0\]: the ComfyUI template "image-to-video" of provider "comfy" makes videos; pic makes images/,
    );
    expect(configError(() => read({ providers, routes: { clip_3_1_fast: [{ provider: 'comfy', model: 'custom' }] } })).message).toMatch(
      /template "custom" .* makes images; clip_3_1_fast makes videos/,
    );
    expect(
      read({ providers, routes: { 'imagegen-5.0': [{ provider: 'comfy', model: 'custom' }], '*': [{ provider: 'comfy' }] } })!.routes['imagegen-5.0'],
    ).toHaveLength(1);
  });

  it('the built-in templates are valid, and their workflow files go into the build (tsconfig.build.json)', () => {
    expect(Object.keys(builtInTemplates())).toEqual(['image', 'image-to-video']);
    const build = JSON.parse(fs.readFileSync('tsconfig.build.json', 'utf8')) as { include: string[] };
    expect(build.include).toContain('src/**/*.json');
  });
});
