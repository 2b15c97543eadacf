"""The API's request bodies, validated with pydantic, and the bodies the handlers return, one module per
resource: ``generations`` (with its first frame and routing options), ``uploads``, ``webhooks``,
``deliveries``, ``events``, ``providers``, ``usage``, ``budgets``, ``keys`` and ``audit``; what they share
(the answers' base, timestamps, the body parser, the problems, and the closed lists whose values live in
``videogen_common``) is ``common``. The same types generate the OpenAPI document (``openapi``), and tests
validate real responses against the response models."""
