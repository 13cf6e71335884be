"""The layers of torch.nn, one family per module."""
from .activation import (GELU, LeakyReLU, LogSoftmax, ReLU, RReLU, Sigmoid, SiLU, Softmax,
                         Tanh, Threshold)
from .batchnorm import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .linear import Flatten, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, CTCLoss, L1Loss, MSELoss,
                   NLLLoss)
from .module import Module
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .rnn import GRU, LSTM
from .sparse import Embedding

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Linear", "Identity", "Flatten",
           "ReLU", "Threshold", "LeakyReLU", "RReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "Softmax",
           "LogSoftmax",
           "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "CTCLoss",
           "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "Embedding",
           "Dropout", "LSTM", "GRU"]
