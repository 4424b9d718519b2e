"""The rules core: component data, configuration, action codec, reference and batched engines."""
