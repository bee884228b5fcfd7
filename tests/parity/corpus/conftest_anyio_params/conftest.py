import pytest


@pytest.fixture(scope='module', params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
