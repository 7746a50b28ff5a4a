"""Real upstreams behind the gateway: paperplug-llm's server with the embedded SmolLM2 (the
`upstream.local` spec), through the official SDK, plain and streamed."""

from paperplug_gateway import create_app, parse_config
from wire import client, streamed


def test_the_embedded_model_behind_the_gateway(serve):
    config = parse_config(
        {"upstream": {"local": "smollm2", "model": "smollm2"}, "defense": [{"name": "regex-guard"}]}
    )
    url = serve(create_app(config))
    sdk = client(url)
    question = [{"role": "user", "content": "Say hello."}]
    plain = sdk.chat.completions.create(model="smollm2", messages=question, max_tokens=8)
    text, finish, _ = streamed(
        sdk.chat.completions.create(model="smollm2", messages=question, max_tokens=8, stream=True)
    )
    assert plain.choices[0].message.content == text != ""  # greedy: the same reply both ways
    assert plain.choices[0].finish_reason == finish == "length"
    assert [m.id for m in sdk.models.list()] == ["smollm2"]
