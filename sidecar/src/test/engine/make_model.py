"""Writes a llama-architecture GGUF with seeded random weights on a real tokenizer (llama SPM vocab).

The output is gibberish, but llama-server's HTTP server, SSE framing, tokenizer, prefill/decode timing, slots,
prefix cache, usage and /metrics are all real (see ../shared/reference/real-engine.md). The same seed and sizes
give a byte-identical file.

usage: PYTHONPATH=<llama.cpp>/gguf-py python3 make_model.py <vocab.gguf> <out.gguf> [embd layers heads ffn]
"""
import sys

import numpy as np
import gguf

vocab_path, out_path = sys.argv[1], sys.argv[2]
n_embd, n_layer, n_head, n_ff = (int(x) for x in (sys.argv[3:7] or (64, 2, 4, 128)))

reader = gguf.GGUFReader(vocab_path)
writer = gguf.GGUFWriter(out_path, "llama")

n_vocab = 0
for field in reader.fields.values():
    name = field.name
    if not name.startswith("tokenizer.ggml."):
        continue
    vtype = field.types[0]
    if vtype == gguf.GGUFValueType.ARRAY:
        sub = field.types[1]
        if sub == gguf.GGUFValueType.STRING:
            value = [bytes(field.parts[i]) for i in field.data]
        else:
            value = [field.parts[i].tolist()[0] for i in field.data]
        writer.add_array(name, value)
        if name == "tokenizer.ggml.tokens":
            n_vocab = len(value)
    elif vtype == gguf.GGUFValueType.STRING:
        writer.add_string(name, bytes(field.parts[-1]).decode("utf-8"))
    else:
        writer.add_key_value(name, field.parts[-1].tolist()[0], vtype)

writer.add_name("llm-sidecar-test-model")
writer.add_context_length(8192)
writer.add_embedding_length(n_embd)
writer.add_block_count(n_layer)
writer.add_feed_forward_length(n_ff)
writer.add_head_count(n_head)
writer.add_head_count_kv(n_head)
writer.add_rope_dimension_count(n_embd // n_head)
writer.add_layer_norm_rms_eps(1e-5)
writer.add_file_type(gguf.LlamaFileType.ALL_F32)
writer.add_chat_template(
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")

rng = np.random.default_rng(20261124)


def tensor(name, *shape, scale=0.02):
    writer.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))


tensor("token_embd.weight", n_vocab, n_embd)
writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
tensor("output.weight", n_vocab, n_embd)
for b in range(n_layer):
    writer.add_tensor(f"blk.{b}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor(f"blk.{b}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
    for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
        tensor(f"blk.{b}.{t}.weight", n_embd, n_embd)
    tensor(f"blk.{b}.ffn_gate.weight", n_ff, n_embd)
    tensor(f"blk.{b}.ffn_up.weight", n_ff, n_embd)
    tensor(f"blk.{b}.ffn_down.weight", n_embd, n_ff)

writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
