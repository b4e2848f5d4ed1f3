"""Is one greedy call (T 0) one answer? The same request asked twice, with the model in between as it is left.

llama-cpp-python's ``Llama.generate`` keeps the previous request's tokens in the KV cache and decodes only what
differs (an identical prompt: its last token again). The same prompt is then evaluated in other batches than the
first time, the rounding differs, and where two next tokens are close the text takes another path. After
``reset()`` the whole prompt is evaluated again and the first text comes back. Run from the repository root:
``python -m bench.replays.greedy_determinism`` (reasoning-gym seed 4000's first syllogism and the
second in between; about a minute on two cores).
"""

from __future__ import annotations

import os

from llama_cpp import Llama

from bench.tasks import select_tasks


def main() -> None:
    _, tasks = select_tasks("rg:syllogism", 40, "4000")
    first, other = tasks[0].question, tasks[1].question
    llm = Llama(model_path=os.path.expanduser("~/.cache/massgen/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
                n_ctx=4096, n_threads=2, verbose=False)

    def ask(question: str) -> str:
        reply = llm.create_chat_completion(messages=[{"role": "user", "content": question}], temperature=0.0,
                                           max_tokens=300)
        return str(reply["choices"][0]["message"]["content"])

    once = ask(first)
    again = ask(first)
    ask(other)
    after_other = ask(first)
    llm.reset()
    after_reset = ask(first)
    def same(text: str) -> str:
        return "same" if text == once else "different"

    print(f"the same request at once: {same(again)} text; after another question: {same(after_other)}; "
          f"after reset(): {same(after_reset)}")
    for name, text in (("at once", again), ("after another", after_other)):
        if text != once:
            at = next((i for i, (a, b) in enumerate(zip(once, text, strict=False)) if a != b),
                      min(len(once), len(text)))
            print(f"{name}: parts at character {at}: {once[at - 40:at + 40]!r} / {text[at - 40:at + 40]!r}")


if __name__ == "__main__":
    main()
