"""Built-in providers pitools can call without any ``models.json`` entry.

For each: the wire protocol, the base URL Pi uses, and the environment variables Pi reads
for its API key (pi-ai ``env-api-keys.ts``; first set variable wins). Providers whose API
pitools does not speak natively are reached through their OpenAI-compatible endpoint where
one exists (noted per entry).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuiltinProvider:
    api: str
    base_url: str
    env_vars: tuple[str, ...]
    #: Pi's default model for this provider (``defaultModelPerProvider``), used when
    #: settings.json names a provider but no model.
    default_model: str | None = None


_OPENAI = "openai-completions"
_ANTHROPIC = "anthropic-messages"

BUILTIN_PROVIDERS: dict[str, BuiltinProvider] = {
    "anthropic": BuiltinProvider(
        _ANTHROPIC,
        "https://api.anthropic.com",
        ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
        "claude-opus-5-5",
    ),
    "openai": BuiltinProvider("openai-responses", "https://api.openai.com/v1", ("OPENAI_API_KEY",), "gpt-6.2-sol"),
    "openrouter": BuiltinProvider(
        _OPENAI, "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",), "moonshotai/kimi-k2.7-code"
    ),
    # Pi uses Google's native Gemini API; pitools uses Google's OpenAI-compatible endpoint.
    "google": BuiltinProvider(
        _OPENAI,
        "https://generativelanguage.googleapis.com/v1beta/openai",
        ("GEMINI_API_KEY",),
        "gemini-4-argon",
    ),
    # Pi uses Mistral's conversations API; pitools uses its chat completions endpoint.
    "mistral": BuiltinProvider(_OPENAI, "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",), "devstral-medium-latest"),
    "groq": BuiltinProvider(_OPENAI, "https://api.groq.com/openai/v1", ("GROQ_API_KEY",), "openai/gpt-oss-120b"),
    "xai": BuiltinProvider("openai-responses", "https://api.x.ai/v1", ("XAI_API_KEY",), "grok-4.7"),
    "deepseek": BuiltinProvider(_OPENAI, "https://api.deepseek.com", ("DEEPSEEK_API_KEY",), "deepseek-v4-pro"),
    "cerebras": BuiltinProvider(_OPENAI, "https://api.cerebras.ai/v1", ("CEREBRAS_API_KEY",), "gpt-oss-120b"),
    "together": BuiltinProvider(_OPENAI, "https://api.together.ai/v1", ("TOGETHER_API_KEY",), "moonshotai/Kimi-K3"),
    "fireworks": BuiltinProvider(
        _OPENAI,
        "https://api.fireworks.ai/inference/v1",
        ("FIREWORKS_API_KEY",),
        "accounts/fireworks/models/kimi-k3",
    ),
    "huggingface": BuiltinProvider(
        _OPENAI, "https://router.huggingface.co/v1", ("HF_TOKEN",), "moonshotai/Kimi-K2.7-Code"
    ),
    "nvidia": BuiltinProvider(
        _OPENAI,
        "https://integrate.api.nvidia.com/v1",
        ("NVIDIA_API_KEY",),
        "nvidia/nemotron-3.5-super-vl-120b-a12b",
    ),
    "moonshotai": BuiltinProvider(_OPENAI, "https://api.moonshot.ai/v1", ("MOONSHOT_API_KEY",), "kimi-k2.7-code"),
    "moonshotai-cn": BuiltinProvider(_OPENAI, "https://api.moonshot.cn/v1", ("MOONSHOT_API_KEY",), "kimi-k2.7-code"),
    "zai": BuiltinProvider(_OPENAI, "https://api.z.ai/api/coding/paas/v4", ("ZAI_API_KEY",), "glm-5.3"),
    "zai-coding-cn": BuiltinProvider(
        _OPENAI, "https://open.bigmodel.cn/api/coding/paas/v4", ("ZAI_CODING_CN_API_KEY",), "glm-5.3"
    ),
    "minimax": BuiltinProvider(_ANTHROPIC, "https://api.minimax.io/anthropic", ("MINIMAX_API_KEY",), "MiniMax-M3"),
    "minimax-cn": BuiltinProvider(
        _ANTHROPIC, "https://api.minimaxi.com/anthropic", ("MINIMAX_CN_API_KEY",), "MiniMax-M3"
    ),
    "kimi-coding": BuiltinProvider(_OPENAI, "https://api.kimi.com/coding/v1", ("KIMI_API_KEY",), "kimi-for-coding"),
    "xiaomi": BuiltinProvider(_OPENAI, "https://api.xiaomimimo.com/v1", ("XIAOMI_API_KEY",), "mimo-v2.6-pro"),
    "ant-ling": BuiltinProvider(_OPENAI, "https://api.ant-ling.com/v1", ("ANT_LING_API_KEY",), "Ring-2.6-1T"),
    "baseten": BuiltinProvider(_OPENAI, "https://inference.baseten.co/v1", ("BASETEN_API_KEY",), "zai-org/GLM-5.3"),
    "vercel-ai-gateway": BuiltinProvider(
        _ANTHROPIC, "https://ai-gateway.vercel.sh", ("AI_GATEWAY_API_KEY",), "zai/glm-5.3"
    ),
}

#: Providers Pi supports that pitools cannot call, with the reason shown to the user.
UNSUPPORTED_PROVIDERS: dict[str, str] = {
    "amazon-bedrock": "Bedrock needs AWS request signing",
    "google-vertex": "Vertex AI needs Google Cloud credentials",
    "openai-codex": "it is reached only through a ChatGPT login (OAuth)",
    "github-copilot": "it is reached only through a GitHub Copilot login (OAuth)",
    "radius": "it uses Pi's own protocol and login",
    "azure": "Azure OpenAI needs a per-resource URL and deployment mapping",
    "cloudflare-workers-ai": "its URL needs a Cloudflare account id",
    "cloudflare-ai-gateway": "its URL needs Cloudflare account and gateway ids",
}

#: Anthropic: a bearer token Pi sends as ``Authorization`` instead of ``x-api-key``.
ANTHROPIC_AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"
