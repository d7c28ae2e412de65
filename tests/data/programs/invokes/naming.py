def subnet(prefix: str, index: int) -> str:
    return f"{prefix}-subnet-{index}"
