// A tiny but real sentence encoder for the `onnx:<dir>` embedder's tests: an ONNX graph
// written here with protobufjs and a Hugging Face WordPiece tokenizer.json, so the
// tests run the real onnxruntime-node and @huggingface/tokenizers without downloading
// a model. The "encoder" looks each token up in an embedding table whose rows point
// along a few concept axes — synonyms share an axis, unrelated words are orthogonal —
// so a paraphrase that shares no word with its fact still lands next to it.

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import protobuf from 'protobufjs';

// The subset of onnx.proto (proto2) this helper writes, with the official field
// numbers; a reader skips nothing it needs, since every field left out is optional.
const ONNX_SCHEMA = `
syntax = "proto2";
package onnx;

message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}

message AttributeProto {
  enum AttributeType {
    UNDEFINED = 0;
    FLOAT = 1;
    INT = 2;
    STRING = 3;
    TENSOR = 4;
  }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
}

message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  repeated AttributeProto attribute = 5;
  optional string domain = 7;
}

message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional string name = 8;
  optional bytes raw_data = 9;
}

message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
  }
  repeated Dimension dim = 1;
}

message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
}

message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
}

message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}

message ModelProto {
  optional int64 ir_version = 1;
  optional string producer_name = 2;
  optional GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
`;

// TensorProto.DataType values.
const FLOAT = 1;
const INT64 = 7;
// AttributeProto.AttributeType.INT
const ATTRIBUTE_INT = 2;

/** The concept axes of the embedding space; a token's row is a multiple of one of them. */
export const AXES = [
  'special',
  'function',
  'unknown',
  'punctuation',
  'padding',
  'animal',
  'vehicle',
  'food',
  'place',
  'work',
  'music',
  'query',
  'passage',
  'question',
  'statement',
] as const;
export type Axis = (typeof AXES)[number];
export const TINY_DIMENSION = AXES.length;

export function axisIndex(axis: Axis): number {
  return AXES.indexOf(axis);
}

// Content words weigh 1; the glue of a sentence weighs little, as it does in a trained
// encoder; [PAD] weighs a lot, so a pooling or padding bug shows in the vector.
const TOKENS: readonly (readonly [Axis, number, string])[] = [
  ['padding', 1, '[PAD]'],
  ['unknown', 0.3, '[UNK]'],
  ['special', 0.3, '[CLS] [SEP]'],
  ['punctuation', 0.1, '? : . , !'],
  [
    'function',
    0.2,
    'my a an the is are what which where who do does i he she her his to in at as of on ' +
      'own mine like have kind ##s',
  ],
  ['animal', 1, 'dog puppy retriever pet cat animal'],
  ['vehicle', 1, 'car vehicle drive drives truck automobile'],
  ['food', 1, 'pizza food eat meal dinner cook'],
  ['place', 1, 'lives live city reside home lisbon'],
  ['work', 1, 'job works nurse hospital profession'],
  ['music', 1, 'guitar plays music instrument song'],
  ['query', 1, 'query'],
  ['passage', 1, 'passage'],
  ['question', 1, 'question'],
  ['statement', 1, 'statement'],
];

/** token → id, in table order ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, …). */
export const TINY_VOCABULARY: ReadonlyMap<string, number> = new Map(
  TOKENS.flatMap(([, , tokens]) => tokens.split(' ')).map((token, id) => [token, id]),
);

function embeddingTable(): Float32Array {
  const table = new Float32Array(TINY_VOCABULARY.size * TINY_DIMENSION);
  for (const [axis, weight, tokens] of TOKENS) {
    for (const token of tokens.split(' ')) {
      const id = TINY_VOCABULARY.get(token) as number;
      table[id * TINY_DIMENSION + axisIndex(axis)] = weight;
    }
  }
  return table;
}

function littleEndianFloats(values: Float32Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((value, index) => view.setFloat32(index * 4, value, true));
  return bytes;
}

function littleEndianInt64s(values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 8);
  const view = new DataView(bytes.buffer);
  values.forEach((value, index) => view.setBigInt64(index * 8, BigInt(value), true));
  return bytes;
}

function tensorValue(name: string, elementType: number, dims: readonly (number | string)[]) {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elementType,
        shape: {
          dim: dims.map((dim) =>
            typeof dim === 'number' ? { dim_value: dim } : { dim_param: dim },
          ),
        },
      },
    },
  };
}

export interface TinyModelOptions {
  /** Adds the third input BERT exports have; the session then refuses to run without it. */
  tokenTypeIds?: boolean;
  /** Declares one more int64 [batch, sequence] input that nothing reads. */
  extraInput?: string;
}

/**
 * last_hidden_state[b, s] = table[input_ids[b, s]] (+ types[token_type_ids[b, s]])
 * + (1 − attention_mask[b, s]) × noise, with symbolic batch and sequence dimensions.
 */
export function encodeTinyModel(options: TinyModelOptions = {}): Uint8Array {
  const root = protobuf.parse(ONNX_SCHEMA, { keepCase: true }).root;
  const ModelProto = root.lookupType('onnx.ModelProto');
  const ids: [string, string] = ['batch', 'sequence'];
  const inputs = [tensorValue('input_ids', INT64, ids), tensorValue('attention_mask', INT64, ids)];
  const initializers = [
    {
      name: 'embedding_table',
      data_type: FLOAT,
      dims: [TINY_VOCABULARY.size, TINY_DIMENSION],
      raw_data: littleEndianFloats(embeddingTable()),
    },
    { name: 'last_axis', data_type: INT64, dims: [1], raw_data: littleEndianInt64s([-1]) },
  ];
  const nodes: object[] = [
    {
      op_type: 'Gather',
      name: 'lookup',
      input: ['embedding_table', 'input_ids'],
      output: ['token_vectors'],
      attribute: [{ name: 'axis', type: ATTRIBUTE_INT, i: 0 }],
    },
  ];
  if (options.extraInput) inputs.push(tensorValue(options.extraInput, INT64, ids));
  let summed = 'token_vectors';
  if (options.tokenTypeIds) {
    inputs.push(tensorValue('token_type_ids', INT64, ids));
    // Type 0 adds nothing, so a correct zero feed leaves the vectors as they are.
    const types = new Float32Array(2 * TINY_DIMENSION);
    types[TINY_DIMENSION + axisIndex('padding')] = 5;
    initializers.push({
      name: 'type_table',
      data_type: FLOAT,
      dims: [2, TINY_DIMENSION],
      raw_data: littleEndianFloats(types),
    });
    nodes.push(
      {
        op_type: 'Gather',
        name: 'type_lookup',
        input: ['type_table', 'token_type_ids'],
        output: ['type_vectors'],
        attribute: [{ name: 'axis', type: ATTRIBUTE_INT, i: 0 }],
      },
      { op_type: 'Add', name: 'add_types', input: [summed, 'type_vectors'], output: ['summed'] },
    );
    summed = 'summed';
  }
  // What a trained encoder emits at masked positions is not defined, so this one puts a
  // loud vector there: pooling must skip exactly the positions whose mask is 0, and a
  // mask of 0 on a real token would show too.
  const noise = new Float32Array(TINY_DIMENSION);
  noise[axisIndex('padding')] = 3;
  initializers.push(
    {
      name: 'one',
      data_type: FLOAT,
      dims: [],
      raw_data: littleEndianFloats(new Float32Array([1])),
    },
    {
      name: 'masked_noise',
      data_type: FLOAT,
      dims: [TINY_DIMENSION],
      raw_data: littleEndianFloats(noise),
    },
  );
  nodes.push(
    {
      op_type: 'Cast',
      name: 'mask_to_float',
      input: ['attention_mask'],
      output: ['mask_float'],
      attribute: [{ name: 'to', type: ATTRIBUTE_INT, i: FLOAT }],
    },
    { op_type: 'Sub', name: 'invert_mask', input: ['one', 'mask_float'], output: ['masked'] },
    {
      op_type: 'Unsqueeze',
      name: 'masked_column',
      input: ['masked', 'last_axis'],
      output: ['masked_column'],
    },
    {
      op_type: 'Mul',
      name: 'noise_where_masked',
      input: ['masked_column', 'masked_noise'],
      output: ['noise'],
    },
    { op_type: 'Add', name: 'add_noise', input: [summed, 'noise'], output: ['last_hidden_state'] },
  );
  const model = ModelProto.fromObject({
    ir_version: 8,
    producer_name: 'keel-tests',
    opset_import: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny_encoder',
      node: nodes,
      initializer: initializers,
      input: inputs,
      output: [tensorValue('last_hidden_state', FLOAT, [...ids, TINY_DIMENSION])],
    },
  });
  return ModelProto.encode(model).finish();
}

/** A BERT-style tokenizer.json: lower-casing normalizer, WordPiece, [CLS] … [SEP]. */
export function tinyTokenizerJson(): object {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];
  const specialToken = (content: string) => ({
    id: TINY_VOCABULARY.get(content) as number,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const template = (token: string) => ({
    id: token,
    ids: [TINY_VOCABULARY.get(token) as number],
    tokens: [token],
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special.map(specialToken),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': template('[CLS]'), '[SEP]': template('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(TINY_VOCABULARY),
    },
  };
}

export interface TinyModelDirectory extends TinyModelOptions {
  /** Writes onnx/model.onnx, as Hugging Face repositories lay it out, instead of model.onnx. */
  nested?: boolean;
  /** The contents of keel-embedder.json; none is written without it. */
  settings?: Record<string, unknown>;
}

/** Writes model, tokenizer.json, tokenizer_config.json (and keel-embedder.json) into dir. */
export async function writeTinyModelDirectory(
  dir: string,
  options: TinyModelDirectory = {},
): Promise<string> {
  const modelDir = options.nested ? join(dir, 'onnx') : dir;
  await mkdir(modelDir, { recursive: true });
  await writeFile(join(modelDir, 'model.onnx'), encodeTinyModel(options));
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
    }),
  );
  if (options.settings) {
    await writeFile(join(dir, 'keel-embedder.json'), JSON.stringify(options.settings));
  }
  return dir;
}
