"""The `ircot` and `ircot_fixed` systems: IRCoT as FlashRAG's IRCOTPipeline runs it. system.py holds the System
classes the registry loads."""
