"""Local stand-ins for hosted sandbox services, written from their public specs (`serve e2b`)."""
