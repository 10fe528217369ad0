print("lanpush")
