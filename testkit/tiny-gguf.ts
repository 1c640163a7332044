/**
 * Writes a tiny llama-architecture GGUF with random F32 weights (a few hundred KB): a byte-level BPE
 * vocabulary (the 256 bytes plus ChatML's special tokens) and a ChatML chat template. Its output is
 * gibberish, which is the point: it loads in milliseconds, so tests exercise the real runtime
 * (loading, chat format, grammar-constrained generation, threads, cancellation) without weights.
 */
import fs from 'node:fs';

/** Shape of the generated model. */
export interface TinyGgufOptions {
  embedding?: number;
  layers?: number;
  contextLength?: number;
  /** Seed of the weights, so a file is the same every time. */
  seed?: number;
  /** A chat template with tool calls and tool results (as Qwen2.5's), for a model trained on them. */
  toolCalls?: boolean;
}

const TYPE = { U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const ALIGNMENT = 32;
const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
/** The ChatML template with a tool-call turn and a tool-result turn, in the shape of Qwen2.5's. */
const TOOL_CALL_TEMPLATE =
  "{% for message in messages %}{% if message.role == 'tool' %}{{'<|im_start|>user\\n<tool_response>\\n' + message['content'] + '\\n</tool_response><|im_end|>\\n'}}" +
  "{% elif message.tool_calls %}{{'<|im_start|>assistant\\n<tool_call>\\n' + (message.tool_calls[0].function | tojson) + '\\n</tool_call><|im_end|>\\n'}}" +
  "{% else %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** GPT-2's byte-to-character map, so every byte is one printable token as byte-level BPE expects. */
function byteTokens(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const tokens = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    tokens[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  }
  return tokens;
}

type Value = { type: 'u32' | 'i32' | 'f32' | 'bool' | 'string'; value: number | boolean | string };
type Entry = Value | { type: 'array'; of: Value['type']; values: (number | string)[] };

class Writer {
  private readonly chunks: Buffer[] = [];
  size = 0;
  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.size += buf.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  scalar(type: Value['type'], v: number | boolean | string): void {
    const b = Buffer.alloc(type === 'bool' ? 1 : 4);
    if (type === 'string') return this.string(String(v));
    if (type === 'u32') b.writeUInt32LE(Number(v));
    else if (type === 'i32') b.writeInt32LE(Number(v));
    else if (type === 'f32') b.writeFloatLE(Number(v));
    else b.writeUInt8(v ? 1 : 0);
    this.push(b);
  }
  pad(): void {
    this.push(Buffer.alloc((ALIGNMENT - (this.size % ALIGNMENT)) % ALIGNMENT));
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const TYPE_CODE: Record<Value['type'], number> = {
  u32: TYPE.U32,
  i32: TYPE.I32,
  f32: TYPE.F32,
  bool: TYPE.BOOL,
  string: TYPE.STRING,
};

/** Writes the model to `file` and returns its size in bytes. */
export function writeTinyGguf(file: string, options: TinyGgufOptions = {}): number {
  const embedding = options.embedding ?? 64;
  const layers = options.layers ?? 2;
  const heads = 4;
  const kvHeads = 2;
  const headDim = embedding / heads;
  const feedForward = embedding * 2;
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  const tokens = [...specials, ...byteTokens(), 'Ġt', 'he', 'Ġthe', 'in', 'er'];
  const merges = ['Ġ t', 'h e', 'Ġt he', 'i n', 'e r'];

  const u32 = (value: number): Entry => ({ type: 'u32', value });
  const metadata: [string, Entry][] = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'tiny-random-test-model' }],
    ['general.alignment', u32(ALIGNMENT)],
    ['general.file_type', u32(0)],
    ['llama.context_length', u32(options.contextLength ?? 2048)],
    ['llama.embedding_length', u32(embedding)],
    ['llama.block_count', u32(layers)],
    ['llama.feed_forward_length', u32(feedForward)],
    ['llama.attention.head_count', u32(heads)],
    ['llama.attention.head_count_kv', u32(kvHeads)],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.rope.freq_base', { type: 'f32', value: 10000 }],
    ['llama.rope.dimension_count', u32(headDim)],
    ['llama.vocab_size', u32(tokens.length)],
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'default' }],
    ['tokenizer.ggml.tokens', { type: 'array', of: 'string', values: tokens }],
    [
      'tokenizer.ggml.token_type',
      { type: 'array', of: 'i32', values: tokens.map((_, i) => (i < 3 ? 3 : 1)) },
    ],
    ['tokenizer.ggml.merges', { type: 'array', of: 'string', values: merges }],
    ['tokenizer.ggml.bos_token_id', u32(0)],
    ['tokenizer.ggml.eos_token_id', u32(2)],
    ['tokenizer.ggml.padding_token_id', u32(0)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    [
      'tokenizer.chat_template',
      { type: 'string', value: options.toolCalls ? TOOL_CALL_TEMPLATE : CHATML_TEMPLATE },
    ],
  ];

  // Dimensions innermost first, as GGUF stores them.
  const tensors: [string, number[]][] = [['token_embd.weight', [embedding, tokens.length]]];
  for (let i = 0; i < layers; i++) {
    const p = `blk.${i}.`;
    tensors.push(
      [`${p}attn_norm.weight`, [embedding]],
      [`${p}attn_q.weight`, [embedding, heads * headDim]],
      [`${p}attn_k.weight`, [embedding, kvHeads * headDim]],
      [`${p}attn_v.weight`, [embedding, kvHeads * headDim]],
      [`${p}attn_output.weight`, [heads * headDim, embedding]],
      [`${p}ffn_norm.weight`, [embedding]],
      [`${p}ffn_gate.weight`, [embedding, feedForward]],
      [`${p}ffn_up.weight`, [embedding, feedForward]],
      [`${p}ffn_down.weight`, [feedForward, embedding]],
    );
  }
  tensors.push(['output_norm.weight', [embedding]]);

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, entry] of metadata) {
    w.string(key);
    if (entry.type === 'array') {
      w.u32(TYPE.ARRAY);
      w.u32(TYPE_CODE[entry.of]);
      w.u64(entry.values.length);
      for (const v of entry.values) w.scalar(entry.of, v);
    } else {
      w.u32(TYPE_CODE[entry.type]);
      w.scalar(entry.type, entry.value);
    }
  }

  let seed = options.seed ?? 12345;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
  let offset = 0;
  const data: Buffer[] = [];
  for (const [name, dims] of tensors) {
    w.string(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    const count = dims.reduce((a, b) => a * b, 1);
    const values = Buffer.alloc(count * 4);
    const norm = name.endsWith('norm.weight');
    for (let j = 0; j < count; j++) values.writeFloatLE(norm ? 1 : random() * 0.1, j * 4);
    data.push(values);
    offset += Math.ceil(values.length / ALIGNMENT) * ALIGNMENT;
  }
  w.pad();
  for (const values of data) {
    w.push(values);
    w.pad();
  }
  const bytes = w.bytes();
  fs.writeFileSync(file, bytes);
  return bytes.length;
}
